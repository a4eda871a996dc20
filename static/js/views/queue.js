// The ready queue after this pop, in the order it will pop them.

import { nodeLabel, seqText } from '../labels.js';
import { frameAt, shownStep } from '../store.js';

export function render(root, state) {
  const frame = frameAt(state.run, shownStep(state));
  const items = [];
  if (frame.step) items.push(item(frame.byId.get(frame.step.node), frame.step.error ? 'error' : 'running'));
  frame.queue.forEach((id, pos) => {
    const node = frame.byId.get(id);
    items.push(item(node, frame.nodes.get(id)?.fresh ? 'fresh' : 'waiting', pos + 1));
  });
  if (!frame.queue.length) {
    const li = document.createElement('li');
    li.className = 'empty';
    li.textContent = frame.pass?.summarized ? 'Not kept for a summarized pass.'
      : !frame.graph ? 'No graph yet.' : frame.k === 0 ? '' : 'Empty: backward is done.';
    if (frame.step?.error) li.textContent = 'Backward stopped at the error.';
    if (li.textContent) items.push(li);
  }
  root.replaceChildren(...items);
}

function item(node, kind, position = null) {
  const li = document.createElement('li');
  li.className = `q-item ${kind}`;
  const pos = document.createElement('span');
  pos.className = 'q-pos';
  pos.textContent = kind === 'running' ? 'now' : kind === 'error' ? '✗' : String(position);
  const name = document.createElement('span');
  name.className = 'q-name';
  name.textContent = nodeLabel(node).replace(/ #\d+$/, '');
  const seq = document.createElement('span');
  seq.className = 'q-seq';
  seq.textContent = seqText(node);
  li.append(pos, name, seq);
  if (kind === 'fresh') {
    const tag = document.createElement('span');
    tag.className = 'q-new';
    tag.textContent = 'new';
    li.append(tag);
  }
  return li;
}
