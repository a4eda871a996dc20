// One sentence for each step, built only from the step's event and the graph: pure
// functions, so the words always match the numbers the server sent. What an error is
// comes from its kind (the server's), never from the words of its message.

import { isAccumulate, isVector, listing, nodeLabel, operand, plural, short, targetLabel } from './labels.js';
import { callText, hooksSentence, ranWith, recordedBy, returnedText, sentReplaced, stale, staleText } from './course.js';
import { fullSteps, listsPops } from './store.js';

/** {sentence, detail} for the frame the page shows. */
export function explainFrame(frame, run) {
  if (!frame.graph) return frame.pass?.summarized ? explainSummary(frame, run) : explainNoGraph(run);
  if (frame.tail) return explainTail(frame);
  if (frame.end) return explainEnd(frame, run);
  if (frame.optimizer) return explainOptimizer(frame);
  if (frame.j < 0) return explainStart(frame, run);
  return explainStep(frame);
}

function explainNoGraph(run) {
  if (run.status === 'running') return { sentence: 'Tracing the program…', detail: '' };
  const e = run.error;
  if (e) return { sentence: stoppedBefore(e), detail: e.kind === 'unreachable' ? '' : e.message };
  if (run.status === 'done') return { sentence: 'The program ran, but no backward() popped a node.', detail: '' };
  return { sentence: 'Press Run to trace the program.', detail: '' };
}

/** Why there is no step to show, by the error's kind. */
function stoppedBefore(e) {
  const at = e.line ? ` on line ${e.line}` : '';
  switch (e.kind) {
    case 'rejected':
      return `The lab did not run this program: fix line ${e.line}, column ${e.col}, where it is underlined.`;
    case 'forward':
      return `PyTorch raised ${e.type}${at}, in the forward pass, before any backward() call: there is no graph to step through.`;
    case 'backward':
      return `backward()${at} raised ${e.type} before the engine popped any node, so there is no step to show.`;
    case 'limit':
      return `The program went past one of the lab's limits${at}, so it stopped there.`;
    case 'unreachable':
      return 'The server could not be reached, so nothing ran: this is not an error of PyTorch or of the program.';
    default:
      return `The lab failed${at} (its fault, not the program's), so there is no step to show.`;
  }
}

/** A pass outside the window the trace keeps step by step: only its order of pops. */
function explainSummary(frame, run) {
  const pass = frame.pass;
  const kept = run.passes.flatMap((q, i) => (q.summarized ? [] : [i + 1]));
  const window = !kept.length ? 'no pass' : kept.length === 1 ? `pass ${kept[0]}`
    : `passes ${kept[0]}–${kept.at(-1)}`;
  return {
    sentence: `Pass ${frame.passIndex + 1}, ${callText(pass)} (line ${pass.line}), is summarized: this trace keeps ${window} step by step, as many as fit the lab's limits. Step through this pass to see it in full.`,
    detail: `The trace keeps its ${pass.steps.length} pops in order (node, sequence number, leaf), not its graph, gradients or .grad values.`,
  };
}

/** After the last step a long pass keeps in full: its later pops, listed (Note [Steps kept
 * in full] in app/trace/kept.py). */
function explainTail(frame) {
  const pass = frame.pass;
  const full = fullSteps(pass);
  return {
    sentence: `${callText(pass)} (line ${pass.line}) popped ${pass.steps.length} nodes; this trace keeps its first ${full} step by step, as many as fit the lab's limits. Pops ${full + 1}–${pass.steps.length} follow in order.`,
    detail: 'For them the trace keeps the node, its sequence number and its leaf, not the gradients; the .grad values after the last pop come next.',
  };
}

function explainStart(frame, run) {
  const root = frame.byId.get(frame.graph.root);
  const call = callText(frame.pass);
  const which = frame.passIndex > 0 ? `${frame.pass.kind === 'grad' ? 'Call' : 'Backward call'} ${frame.passIndex + 1}, ${call}` : call;
  const fn = isAccumulate(root) ? `${nodeLabel(root)}, since ${frame.pass.output} is a leaf`
    : `${nodeLabel(root)}, the grad_fn of ${frame.pass.output}`;
  return {
    sentence: `${which} (line ${frame.pass.line}) starts: the engine counts how many gradients each node will receive, then puts ${fn}, in the ready queue.`,
    detail: ['The badge on each node is that count. Press → or Play to pop the first node.',
             ...startNotes(frame, run)].join(' '),
  };
}

/** What a grad pass does instead of writing .grad, and which nodes a create_graph pass made. */
function startNotes(frame, run) {
  const notes = [];
  if (frame.pass.kind === 'grad') notes.push('autograd.grad runs no AccumulateGrad: it returns the gradients at its inputs and writes no .grad.');
  const made = recordedBy(run, frame.passIndex);
  for (const q of new Set(made.values())) {
    const nodes = [...made].filter(([, by]) => by === q).map(([id]) => nodeLabel(frame.byId.get(id)));
    notes.push(`${listing(nodes)} ${plural(nodes.length, 'was', 'were')} recorded by pass ${q + 1}, ${callText(run.passes[q])} with create_graph=True (line ${run.passes[q].line}): this pass differentiates that backward.`);
  }
  return notes;
}

function explainStep(frame) {
  const step = frame.step;
  const node = frame.byId.get(step.node);
  const label = nodeLabel(node);
  if (step.error) return explainError(frame, node, label);
  const verb = action(frame, node);
  let sentence;
  if (frame.j === 0) {
    const what = isAccumulate(node) ? label : `${label}, the grad_fn of ${frame.pass.output},`;
    sentence = `${what} pops first with the seed gradient ${short(step.grad_text)} and ${verb}.`;
  } else {
    const others = frame.prevQueue.filter((id) => id !== step.node).map((id) => frame.byId.get(id));
    sentence = others.length ? `${label} runs before ${listing(others.map(nodeLabel))}: ${reason(node, others)}; it ${verb}.`
      : `${label} ${verb}.`;
  }
  const hooks = hooksSentence(step);
  return { sentence: hooks ? `${sentence} ${hooks}` : sentence, detail: detail(frame, node, step) };
}

/** Why the ready queue popped this node rather than the others waiting. */
function reason(node, others) {
  const all = others.length > 1 ? 'all are ready' : 'both are ready';
  if (isAccumulate(node) && others.every(isAccumulate)) {
    return `${all} with the same sequence number (MAX), and PyTorch's heap pops this one first`;
  }
  if (isAccumulate(node)) return `${all}, and AccumulateGrad's sequence number (MAX) is the largest`;
  return `${all}, and #${node.seq} is the largest sequence number: later operations run first`;
}

/** What the node does, as a verb phrase: "sends 14 × 2 = 28 to w". */
function action(frame, node) {
  const step = frame.step;
  if (isAccumulate(node)) {
    if (step.grad_before === null) return `writes ${node.leaf}.grad = ${short(step.grad_after_text)} (its first gradient)`;
    return `adds ${short(step.grad_text)} to ${node.leaf}.grad: ${short(step.grad_before_text)} + ${short(step.grad_text)} = ${short(step.grad_after_text)}`;
  }
  if (step.sent.length === 0) return 'sends nothing: none of its inputs needs a gradient';
  const parts = step.sent.map((s) => ({ expr: formula(node, step, s), to: targetLabel(frame.byId.get(s.to)), text: s.text }));
  if (parts.length === 2 && parts[0].to === parts[1].to && parts[0].expr === parts[1].expr) {
    return `sends ${parts[0].expr} to ${parts[0].to} along both edges`;
  }
  return `sends ${listing(parts.map((p) => `${p.expr} to ${p.to}`))}`;
}

/** The local derivative at work, from the node's saved values: "14 × 2 = 28". */
export function formula(node, step, sent) {
  const saved = Object.fromEntries(node.saved.map((s) => [s.name, s.value]));
  const ran = ranWith(step);
  const out = short(sent.text);
  if (ran === null || sentReplaced(step)) return out;
  const g = operand(ran);
  const neg = (x) => `−${x}`;
  const rules = {
    MulBackward0: () => saved[sent.edge === 0 ? 'other' : 'self'] && `${g} × ${operand(saved[sent.edge === 0 ? 'other' : 'self'])}`,
    AddBackward0: () => (sent.edge === 1 && saved.alpha && saved.alpha !== '1' ? `${g} × ${saved.alpha}` : null),
    SubBackward0: () => (sent.edge === 1 ? neg(g) : null),
    RsubBackward1: () => neg(g),
    NegBackward0: () => neg(g),
    DivBackward0: () => (sent.edge === 0 ? saved.other && `${g} / ${operand(saved.other)}`
      : saved.self && saved.other && `${neg(g)} × ${operand(saved.self)} / ${operand(saved.other)}²`),
    PowBackward0: () => saved.self && saved.exponent && `${g} × ${saved.exponent} × ${operand(saved.self)}^(${saved.exponent} − 1)`,
    TanhBackward0: () => saved.result && `${g} × (1 − ${operand(saved.result)}²)`,
    SigmoidBackward0: () => saved.result && `${g} × ${operand(saved.result)} × (1 − ${operand(saved.result)})`,
    ExpBackward0: () => saved.result && `${g} × ${operand(saved.result)}`,
    LogBackward0: () => saved.self && `${g} / ${operand(saved.self)}`,
    SinBackward0: () => saved.self && `${g} × cos(${short(saved.self)})`,
    CosBackward0: () => saved.self && `${g} × −sin(${short(saved.self)})`,
    SqrtBackward0: () => saved.result && `${g} / (2 × ${operand(saved.result)})`,
    ReluBackward0: () => saved.result && `${g} × (${short(saved.result)} > 0)`,
    AbsBackward0: () => saved.self && `${g} × sign(${short(saved.self)})`,
    ReciprocalBackward0: () => saved.result && `${g} × −${operand(saved.result)}²`,
    MeanBackward0: () => saved.self_sym_numel && `${g} / ${saved.self_sym_numel}`,
  };
  const rule = rules[node.name];
  const expr = rule ? rule() : null;
  if (!expr) return out;
  const summed = isVector(step.grad_text) && !isVector(sent.text) ? ', summed' : '';
  return `${expr}${summed} = ${out}`;
}

function detail(frame, node, step) {
  const parts = [];
  if (node.code) {
    parts.push(`Its backward() is the program's own, in class ${node.name.replace(/Backward$/, '')}: lines ${node.code[0]}–${node.code[1]}, marked in the editor.`);
  }
  const received = frame.nodes.get(step.node).received;
  if (received.length > 1) {
    parts.push(`Its input buffer summed the ${received.length} gradients it received: ${received.map((r) => operand(r.text)).join(' + ')} = ${short(step.grad_text)}.`);
  }
  const tensors = new Set(node.saved.filter((s) => s.is_tensor).map((s) => s.name));
  const freed = step.released.filter((n) => tensors.has(n));
  if (freed.length) {
    parts.push(`Then it frees its saved ${listing(freed)}: backward() keeps nothing it no longer needs.`);
  }
  const ready = step.ready.map((id) => frame.byId.get(id)).filter(Boolean);
  if (ready.length) {
    parts.push(`${listing(ready.map(nodeLabel))} ${plural(ready.length, 'has', 'have')} all ${plural(ready.length, 'its', 'their')} gradients now and ${plural(ready.length, 'joins', 'join')} the ready queue.`);
  }
  if (isAccumulate(node) && step.grad_before !== null) {
    parts.push('.grad accumulates: backward() adds to it and never resets it.');
  } else if (isAccumulate(node)) {
    parts.push(`${node.leaf}.grad was None, so AccumulateGrad stores the gradient; a later backward() would add to it.`);
  }
  const last = frame.j === frame.pass.steps.length - 1;
  if (last && frame.pass.kind === 'grad') {
    // The inputs' nodes still in the queue pop only to hand their gradient over (no step).
    const returned = frame.pass.returned;
    parts.push(`${callText(frame.pass)} is done${returned ? `: it returns ${returnedText(returned)}` : ''}. It captures the gradients at its inputs and runs no AccumulateGrad, so no .grad is written.`);
  } else if (last && !frame.queue.length) {
    parts.push(`${callText(frame.pass)} is done: every node it reached has run.`);
  }
  return parts.join(' ');
}

function explainError(frame, node, label) {
  const e = frame.step.error;
  // Saved tensors already freed when this backward() began: an earlier one freed them.
  const freed = node.saved.filter((s) => s.is_tensor && s.released);
  if (freed.length) {
    const names = freed.map((s) => s.name);
    return {
      sentence: `${label} cannot run: an earlier backward() freed its saved ${listing(names)}, so PyTorch raises RuntimeError and backward stops here.`,
      detail: `${e.type}: ${e.message}`,
    };
  }
  const changed = stale(node);
  if (changed.length) {
    return {
      sentence: `${label} cannot run: its saved ${listing(changed.map((s) => s.name))} was changed in place (${listing(changed.map(staleText))}), so PyTorch raises ${e.type} and backward stops here.`,
      detail: `${e.type}: ${e.message}`,
    };
  }
  return { sentence: `${label} raises ${e.type}, and backward stops here.`, detail: e.message };
}

function explainEnd(frame, run) {
  const e = run.error;
  if (e) {
    const what = e.kind === 'backward' ? `the backward() call on line ${e.line} raises ${e.type}`
      : e.kind === 'forward' ? `line ${e.line} raises ${e.type}, outside any backward() call`
        : e.kind === 'limit' ? `line ${e.line} goes past one of the lab's limits`
          : `the lab fails on line ${e.line}`;
    return { sentence: `After the steps above, ${what}.`, detail: e.message };
  }
  const reset = frame.leaves.filter((l) => l.grad === null).map((l) => `${l.name}.grad = None`);
  if (reset.length) {
    return { sentence: `After the last backward(), the program sets ${listing(reset)}: the gradients are forgotten.`,
             detail: 'A later backward() would write .grad afresh (a first write) instead of adding to it.' };
  }
  const last = run.passes.at(-1);
  if (listsPops(last)) {
    const grads = frame.leaves.filter((l) => l.grad !== null).map((l) => `${l.name}.grad = ${short(l.grad)}`);
    return { sentence: `After its last pop, ${callText(last)} has left ${grads.length ? listing(grads) : 'no .grad written'}.`,
             detail: 'These are the values after the pops the trace only lists.' };
  }
  return { sentence: 'After the last backward(), the program changed .grad.', detail: '' };
}

// -- the "backward again" notes ---------------------------------------------------------------

/** One sentence on what a "backward again" rewrite did, from the new trace. */
export function explainNote(note, run) {
  if (!note || run.status !== 'done' || !run.passes.length) return '';
  const changes = gradChanges(run);
  const last = run.passes.at(-1);
  const failed = last.steps.find((s) => s.error);
  if (note === 'again' || note === 'again-retain') {
    if (failed) {
      const node = last.graph.nodes.find((n) => n.id === failed.node);
      return `The second ${last.output}.backward() stopped at ${nodeLabel(node)}: the first backward() had freed the saved tensors it needs, so PyTorch raises RuntimeError. Tick retain_graph=True to keep them.`;
    }
    if (note === 'again-retain') {
      return `With retain_graph=True the first backward() kept its saved tensors, so the second one ran through the same graph and added again: ${changes}.`;
    }
    return `This graph saves no tensors that backward() needs, so the second backward() ran too and added again: ${changes}.`;
  }
  if (note === 'forward') {
    const seqs = last.graph.nodes.filter((n) => !isAccumulate(n)).map((n) => n.seq);
    const range = seqs.length ? `#${Math.min(...seqs)}–#${Math.max(...seqs)}` : '';
    const fresh = last.steps.some((st) => st.leaf !== null && !st.error && st.grad_before === null);
    const how = fresh ? 'wrote .grad afresh, since it was None' : 'added into .grad';
    return `The new forward pass recorded new nodes ${range} (the sequence numbers continue), and backward() ${how}: ${changes}.`;
  }
  if (note === 'zero') {
    const names = Object.keys(run.grads).map((n) => `${n}.grad`);
    return `${listing(names)} = None forgets the gradients: a later backward() writes .grad afresh instead of adding to it.`;
  }
  return '';
}

/** What the last backward() did to each .grad it wrote: "w.grad 28 → 56", or "w.grad
 * None → 28" after zero_grad(): the value before its first write → after its last. */
export function gradChanges(run) {
  const before = {};
  const after = {};
  for (const step of run.passes.at(-1).steps) {
    if (step.leaf === null || step.error || !('grad_after' in step)) continue;
    if (!(step.leaf in before)) before[step.leaf] = 'grad_before_text' in step ? step.grad_before_text : '?';
    after[step.leaf] = step.grad_after_text;
  }
  const items = Object.keys(before).map((leaf) => `${leaf}.grad ${short(before[leaf])} → ${short(after[leaf])}`);
  return items.length ? listing(items) : 'no .grad changed';
}

/** The frame after a backward call's pops where optimizer.step() consumed its gradients. */
function explainOptimizer(frame) {
  const o = frame.optimizer;
  const h = o.hyper;
  const names = o.params.map((q) => q.name ?? 'a parameter');
  const settings = o.kind === 'SGD'
    ? [`lr ${h.lr}`, h.momentum ? `momentum ${h.momentum}` : '', h.dampening ? `dampening ${h.dampening}` : '',
       h.weight_decay ? `weight_decay ${h.weight_decay}` : '', h.nesterov ? 'nesterov' : '', h.maximize ? 'maximize' : '']
    : [`lr ${h.lr}`, `betas (${(h.betas ?? []).join(', ')})`, `eps ${h.eps}`,
       h.weight_decay ? `weight_decay ${h.weight_decay}` : '', h.amsgrad ? 'amsgrad' : '', h.maximize ? 'maximize' : ''];
  const rule = o.kind === 'Adam'
    ? 'Adam keeps running averages of g (exp_avg) and of g² (exp_avg_sq), corrects their bias towards 0, and moves each value by lr · m̂ / (√v̂ + ε).'
    : h.momentum ? 'SGD with momentum first updates the buffer, b ← μ·b + g (the first step starts it at g), then moves each value: w ← w − lr·b.'
      : 'SGD moves each value against its gradient: w ← w − lr·g.';
  return {
    sentence: `The ${o.kind} optimizer's step() on line ${o.line} (${settings.filter(Boolean).join(', ')}) consumes the .grad this backward call wrote: it updates ${listing(names)} in place, under no_grad, so it records no node.`,
    detail: `${rule} The optimizer panel shows each value before and after, and the rule with its numbers.`,
  };
}

