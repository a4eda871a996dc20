// What the course's programs add to the graph, drawn in the overlay (inside the camera's
// transform, so it moves and zooms with the nodes): tags on custom Function nodes and on
// nodes a create_graph pass recorded, version badges on saved tensors changed in place;
// and for the step shown, its hooks beside the node in firing order and phase, the failing
// node's message, and at a grad pass's end what autograd.grad returned. The narration says
// all of it in words; this layer is for the eye (aria-hidden, like the pulses).

import { nodeCentre } from '../camera.js';
import { PHASE, PHASE_TEXT, hookEffect, hookName, isCustom, recordedBy, stale, values } from '../course.js';
import { cameraOf, frameAt, shownStep } from '../store.js';
import { NODE_H, NODE_W } from './geometry.js';

export function render(root, state) {
  const overlay = root.querySelector('.overlay');
  let layer = overlay.querySelector('.notes');
  if (!layer) {
    layer = div('notes');
    overlay.append(layer);
  }
  const frame = frameAt(state.run, shownStep(state));
  const camera = cameraOf(state);
  if (layer.frame === frame && layer.camera === camera) return;
  layer.frame = frame;
  layer.camera = camera;
  const side = sides(camera, state.box);
  layer.replaceChildren(...(frame.graph ? [...tags(state.run, frame), ...cards(frame, side)] : []));
}

const CARD = 170;               // a card's largest width (course.css)
const GAP = 12;                 // between a node and its card

/** Where a node's card goes as the camera shows the graph now: on the side of the box
 * with more room, moved over the node as far as it must to stay inside the box. */
function sides(camera, box) {
  return (cx) => {
    if (!camera || !box) return { left: false, x: cx + NODE_W / 2 + GAP };
    const s = camera.scale;
    const at = box.w / 2 + (cx - camera.cx) * s;            // the node's centre in the box
    const reach = (NODE_W / 2 + GAP + CARD) * s;
    const left = box.w - (at + reach) < 0 && at - reach > box.w - (at + reach);
    const over = left ? Math.max(0, 4 - (at - reach)) : Math.max(0, at + reach - (box.w - 4));
    return { left, x: cx + (left ? -1 : 1) * (NODE_W / 2 + GAP - over / s) };
  };
}

function div(cls, text = null) {
  const node = document.createElement('div');
  node.className = cls;
  if (text !== null) node.textContent = text;
  return node;
}

function at(node, x, y) {
  node.style.left = `${x}px`;
  node.style.top = `${y}px`;
  return node;
}

/** Marks that belong to a node for the whole pass, under its box: what it is on the left
 * (a custom Function, made by a create_graph pass), its stale saved tensors on the right. */
function tags(run, frame) {
  const made = recordedBy(run, frame.passIndex);
  const out = [];
  for (const n of frame.graph.nodes) {
    const [cx, cy] = nodeCentre(frame.graph, n);
    const below = cy + NODE_H / 2 + 3;
    const kinds = [];
    if (isCustom(n)) kinds.push(['tag fn', 'autograd.Function']);
    if (made.has(n.id)) kinds.push(['tag made', `made by pass ${made.get(n.id) + 1}`]);
    kinds.forEach(([cls, text], i) => out.push(at(div(cls, text), cx - NODE_W / 2 + 4, below + 19 * i)));
    stale(n).forEach((s, i) => {
      const badge = at(div('tag version', `${s.name} v${s.saved_version} → v${s.version}`), cx + NODE_W / 2 - 4, below + 19 * i);
      badge.title = `${s.name} was saved at version ${s.saved_version} and changed in place since: version ${s.version}`;
      out.push(badge);
    });
  }
  return out;
}

/** The step's own cards, beside the node they belong to. */
function cards(frame, side) {
  const out = [];
  const step = frame.step;
  const beside = (id, card, below = 0) => place(frame, side, id, card, below);
  if (step?.hooks?.length) out.push(beside(step.node, hookCard(step.hooks)));
  if (step?.error) {
    const card = div('card failed');
    card.append(div('card-head', `raises ${step.error.type}`), div('card-text', step.error.message));
    out.push(beside(step.node, card, out.length));
  }
  const pass = frame.pass;
  if (pass.kind === 'grad' && pass.returned && frame.j === pass.steps.length - 1) {
    for (const r of pass.returned) {
      const node = frame.graph.nodes.find((n) => (n.leaf ?? n.variable) === r.input);
      if (!node) continue;
      const card = div('card returned');
      card.append(div('card-head', `grad returns, for ${r.input}`), div('card-value', values(r.text)),
                  div('card-text', node.leaf ? `${node.leaf}.grad stays ${values(gradOf(frame, node.leaf))}` : 'no .grad written'));
      out.push(beside(node.id, card));
    }
  }
  return out;
}

function gradOf(frame, leaf) {
  return frame.leaves.find((row) => row.name === leaf)?.grad ?? null;
}

/** The hooks in firing order, grouped by when they fire within the pop. */
function hookCard(hooks) {
  const card = div('card hooks');
  let phase = null;
  hooks.forEach((h, i) => {
    const now = PHASE[h.kind] ?? 'before';
    if (now !== phase) { phase = now; card.append(div('card-head', `hooks ${PHASE_TEXT[phase]}`)); }
    const row = div(`hook${h.replaced ? ' replaced' : ''}`);
    row.append(div('hook-name', `${i + 1}. ${hookName(h)}`), div('hook-effect', hookEffect(h)));
    card.append(row);
  });
  return card;
}

/** A card beside its node, on the side `side` picks; `below` stacks a second card under
 * the first. */
function place(frame, side, id, card, below) {
  const [cx, cy] = nodeCentre(frame.graph, frame.byId.get(id));
  const { left, x } = side(cx);
  card.classList.add(left ? 'left' : 'right');
  return at(card, x, cy - NODE_H / 2 + below * 64);
}
