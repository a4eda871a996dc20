// The leaves panel for a network: the parameters listed per module (a header row for each
// band that holds some, with a button that opens or closes it in the graph), and each
// tensor leaf's value and .grad as heatmaps with their shapes. Scalars keep the panel's own
// rows (views/leaves.js).

import { figure, flatten, shapeText } from './heatmap.js';
import { choicesOf, membersOf, openBands } from './modules.js';

const rowsCache = new Map();       // leaf name -> {key, tr}
const members = new WeakMap();     // graph -> membersOf(graph)

/** The rows for `shown` leaves at this frame, or null to let views/leaves.js draw them. */
export function leafRows(shown, frame, state, plainRow, onToggle) {
  const graph = frame.graph;
  const tensors = shown.some((leaf) => Array.isArray(leaf.data) || Array.isArray(leaf.gradData));
  if (!graph || (!tensors && !graph.bands.length)) return null;
  const bandOf = new Map(graph.nodes.filter((n) => n.leaf !== null).map((n) => [n.leaf, n.band]));
  if (!members.has(graph)) members.set(graph, membersOf(graph));
  const open = openBands(graph, frame, choicesOf(state), members.get(graph));
  const out = [];
  let current;
  for (const leaf of shown) {
    const band = bandOf.get(leaf.name) ?? null;
    if (band !== current && band !== null) out.push(header(graph.bands.find((b) => b.id === band), open.get(band), onToggle));
    current = band;
    out.push(...tensorRow(leaf, plainRow, band));
  }
  return out;
}

const headers = new Map();

function header(band, isOpen, onToggle) {
  const key = `${band.id}|${isOpen}|${band.params.join()}`;
  if (headers.get(band.id)?.key === key) return headers.get(band.id).tr;
  const tr = document.createElement('tr');
  tr.className = 'band-row';
  const th = document.createElement('th');
  th.colSpan = 3;
  th.scope = 'colgroup';
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'band-toggle';
  button.setAttribute('aria-expanded', String(isOpen));
  button.setAttribute('aria-controls', 'graph-wrap');
  button.title = isOpen ? 'Show this group as one box in the graph' : 'Show this group\'s nodes in the graph';
  button.textContent = `${isOpen ? '▾' : '▸'} ${band.kind === 'layer' ? `layer ${band.id}` : band.id}`;
  button.addEventListener('click', () => onToggle(band.id));
  const count = document.createElement('span');
  count.className = 'band-count';
  count.textContent = `${band.params.length} ${band.params.length === 1 ? 'parameter' : 'parameters'}`;
  th.append(button, ' ', count);
  tr.append(th);
  headers.set(band.id, { key, tr });
  return tr;
}

/** A tensor leaf: its name and shape, then its value and .grad side by side. */
function tensorRow(leaf, plainRow, band) {
  if (!Array.isArray(leaf.data) && !Array.isArray(leaf.gradData)) {
    const tr = plainRow(leaf);
    if (band !== null) tr.classList.add('in-band');
    return [tr];
  }
  const key = [leaf.data, leaf.gradData, leaf.write, leaf.grad, leaf.value];
  const cached = rowsCache.get(leaf.name);
  if (cached && cached.key.every((x, i) => x === key[i])) return cached.trs;
  const head = document.createElement('tr');
  head.className = `tensor-leaf${leaf.write ? ` written ${leaf.write}` : ''}${band !== null ? ' in-band' : ''}`;
  const name = document.createElement('th');
  name.scope = 'row';
  name.textContent = shortName(leaf.name, band);
  name.title = leaf.name;
  const shape = document.createElement('td');
  shape.colSpan = 2;
  shape.className = 'leaf-shape';
  shape.textContent = shapeText(flatten(leaf.data ?? leaf.gradData).shape);
  if (leaf.write) {
    const how = document.createElement('span');
    how.className = 'how';
    how.textContent = leaf.write === 'first' ? 'first write' : '+=';
    shape.append(' ', how);
  }
  head.append(name, shape);
  const body = document.createElement('tr');
  body.className = 'tensor-values-row';
  const cell = document.createElement('td');
  cell.colSpan = 3;
  const pair = document.createElement('div');
  pair.className = 'tensor-pair';
  if (Array.isArray(leaf.data)) {
    pair.append(figure(leaf.data, { label: leaf.name, caption: 'value', text: leaf.value, compact: true }));
  }
  if (Array.isArray(leaf.gradData)) {
    pair.append(figure(leaf.gradData, { label: `${leaf.name}.grad`, caption: '.grad', text: leaf.grad, compact: true }));
  } else {
    const none = document.createElement('p');
    none.className = 'tensor-none';
    none.textContent = leaf.grad === null ? '.grad is None' : `.grad ${leaf.grad}`;
    pair.append(none);
  }
  cell.append(pair);
  body.append(cell);
  const trs = [head, body];
  rowsCache.set(leaf.name, { key, trs });
  return trs;
}

function shortName(name, band) {
  return band !== null && name.startsWith(`${band}.`) ? `.${name.slice(band.length + 1)}` : name;
}
