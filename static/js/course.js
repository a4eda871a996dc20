// Words for what the course's programs add to a trace: passes of two kinds inside loops,
// hooks, saved tensors changed in place, custom Functions, nodes a create_graph pass
// recorded, tensors outside the graph. Pure functions of the server's fields, shared by the
// narration and the views, so that the page's words always match its numbers.

import { isAccumulate, short } from './labels.js';

/** `loss.backward()` or `torch.autograd.grad(y, …)`: the call that made the pass. */
export function callText(pass) {
  if (pass.kind === 'grad') return `torch.autograd.grad(${pass.output}, …)`;
  return /^[\w.[\]]+$/.test(pass.output) ? `${pass.output}.backward()` : `(${pass.output}).backward()`;
}

/** "pass 3 of 20 · backward() at line 7, iteration 3" (count omitted while streaming). */
export function passLabel(pass, p, count) {
  const call = pass.kind === 'grad' ? 'autograd.grad()' : 'backward()';
  const at = [`${call} at line ${pass.line}`, iterations(pass.iteration)].filter(Boolean).join(', ');
  return `pass ${p + 1}${count ? ` of ${count}` : ''} · ${at}${pass.summarized ? ' · summarized' : ''}`;
}

/** "iteration 3", or for nested loops "iteration 3 (outer 2)": the innermost first. */
function iterations(its) {
  if (!its?.length) return '';
  const outer = its.slice(0, -1);
  return `iteration ${its.at(-1)}${outer.length ? ` (outer ${outer.join(', ')})` : ''}`;
}

/** Values as the page writes them, inside a tuple too: "(tensor(2.),)" → "(2,)". */
export function values(text) {
  if (text === null || text === undefined) return 'None';
  return /^\(/.test(text) ? text.replace(/tensor\([^()]*\)/g, short) : short(text);
}

// -- hooks ---------------------------------------------------------------------------------

const HOOK = { tensor: 'hook', retain_grad: 'retain_grad()', pre: 'prehook', post: 'hook',
               post_accumulate: 'post-accumulate-grad hook' };
/** When each kind fires within its pop (reference §7). */
export const PHASE = { tensor: 'before', retain_grad: 'before', pre: 'before', post: 'after',
                       post_accumulate: 'write' };
export const PHASE_TEXT = { before: 'before it runs', after: 'after it runs', write: 'after the .grad write' };

export function hookName(h) {
  return h.kind === 'retain_grad' ? `retain_grad() on ${h.label}` : `${HOOK[h.kind] ?? h.kind} on ${h.label}`;
}

/** What one hook did: "20 → None (kept)", "20 → 1 (replaced)", "y.grad = 13". */
export function hookEffect(h) {
  if (h.kind === 'retain_grad') return `${h.label}.grad = ${values(h.before)}`;
  if (h.after === null) return `${values(h.before)} → None (kept)`;
  return `${values(h.before)} → ${values(h.after)}${h.replaced ? ' (replaced)' : ''}`;
}

/** One sentence on the step's hooks, in firing order, by phase; '' without any. */
export function hooksSentence(step) {
  const hooks = step.hooks ?? [];
  const parts = Object.keys(PHASE_TEXT).map((phase) => {
    const here = hooks.filter((h) => (PHASE[h.kind] ?? 'before') === phase);
    return here.length ? `${PHASE_TEXT[phase]}, ${here.map(hookPhrase).join(', then ')}` : '';
  }).filter(Boolean);
  if (!parts.length) return '';
  const text = parts.join('; ');
  return `${text[0].toUpperCase()}${text.slice(1)}.`;
}

function hookPhrase(h) {
  if (h.kind === 'retain_grad') return `retain_grad() keeps ${h.label}.grad = ${values(h.before)}`;
  const got = `the ${hookName(h)} gets ${values(h.before)}`;
  if (h.after === null) return `${got} and returns None`;
  return `${got} and returns ${values(h.after)}${h.replaced ? ', which replaces it' : ''}`;
}

/** The gradient the node ran with: what it received, unless a hook before it replaced it.
 * Null when that is a tuple of several (the formula then gives only the result). */
export function ranWith(step) {
  let g = step.grad_text;
  for (const h of step.hooks ?? []) {
    if (PHASE[h.kind] !== 'before' || !h.replaced || h.after === null) continue;
    const one = /^\((.*),\)$/.exec(h.after);
    g = h.kind === 'pre' ? (one ? one[1] : null) : h.after;
  }
  return g;
}

/** Whether a hook after the node replaced what it sent (the formula no longer holds). */
export function sentReplaced(step) {
  return (step.hooks ?? []).some((h) => h.kind === 'post' && h.replaced);
}

// -- nodes ---------------------------------------------------------------------------------

/** Saved tensors changed in place since they were saved: PyTorch raises at this node. */
export function stale(node) {
  return node.saved.filter((s) => s.is_tensor && s.saved_version !== s.version);
}

export function staleText(s) {
  return `${s.name} saved at version ${s.saved_version}, now ${s.version}`;
}

/** A custom autograd.Function's node carries its backward's lines. */
export function isCustom(node) {
  return Array.isArray(node.code);
}

/** The nodes of pass p's graph that an earlier create_graph pass recorded as it ran: node
 * id → that pass's index. The trace does not say it outright: such a node carries the
 * line of that pass's call, was not in its graph, and is newer than all of it. */
export function recordedBy(run, p) {
  const out = new Map();
  const graph = run.passes[p]?.graph;
  if (!graph) return out;
  for (let q = 0; q < p; q++) {
    const earlier = run.passes[q];
    if (!earlier.create_graph) continue;
    const had = new Set((earlier.graph?.nodes ?? []).map((n) => n.id));
    const newest = Math.max(-1, ...(earlier.graph?.nodes ?? []).filter((n) => !isAccumulate(n)).map((n) => n.seq));
    for (const n of graph.nodes) {
      if (!isAccumulate(n) && n.line === earlier.line && !had.has(n.id) && n.seq > newest) out.set(n.id, q);
    }
  }
  return out;
}

// -- what autograd.grad returned, and what is outside the graph --------------------------

/** "(tensor(12.),)" as the program's tuple would print it. */
export function returnedText(returned) {
  const items = returned.map((r) => r.text ?? 'None');
  return `(${items.join(', ')}${items.length === 1 ? ',' : ''})`;
}

export const OUTSIDE = {
  no_grad: 'made under torch.no_grad(): nothing recorded it',
  detach: 'from .detach(): the values without their history',
  data: 'from .data: the values without their history',
  inference_mode: 'made under torch.inference_mode(): never recorded',
  'requires_grad=False': 'a constant: it does not require grad',
};
