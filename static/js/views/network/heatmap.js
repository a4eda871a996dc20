// A tensor at a glance: its shape and a small heatmap of its values. The colours diverge
// from white at zero (blue below, orange above: a pair that reads for red-green colour
// blindness) on a scale symmetric about zero, in 6 steps a side; any value not 0 gets at
// least the palest step. The numbers themselves are the trace's (float32 as JSON numbers,
// "nan"/"inf" as strings), shown on hover or focus and in a table; PyTorch's printed text
// gives them exactly. Nothing here computes a value: it only draws the ones it is given.

const SVG = 'http://www.w3.org/2000/svg';
export const STEPS = 6;
export const MAX_CELLS = 1024;      // more are not drawn (the trace sends none past 1000)

/** {shape, values} of a JSON value: nested lists, a number, or "nan"/"inf"/"-inf". */
export function flatten(value) {
  const shape = [];
  let probe = value;
  while (Array.isArray(probe)) { shape.push(probe.length); probe = probe[0]; }
  const values = Array.isArray(value) ? value.flat(Infinity) : [value];
  return { shape, values };
}

/** "4×3", "5" (a vector), "scalar". */
export function shapeText(shape) {
  return shape.length ? shape.join('×') : 'scalar';
}

export function shapeWords(shape) {
  if (!shape.length) return 'a scalar';
  if (shape.length === 1) return `a vector of ${shape[0]}`;
  return `${shape.join(' by ')}`;
}

/** Rows and columns as drawn: a vector is one row; leading dimensions stack as rows. */
export function grid(shape) {
  const cols = shape.length ? shape.at(-1) : 1;
  const rows = shape.slice(0, -1).reduce((a, b) => a * b, 1);
  return { rows, cols };
}

function finite(v) {
  return typeof v === 'number' && Number.isFinite(v);
}

/** The largest |v| among the finite values: the scale's end on either side. */
export function scaleOf(values) {
  let m = 0;
  for (const v of values) if (finite(v) && Math.abs(v) > m) m = Math.abs(v);
  return m;
}

/** The colour step of one value: -STEPS..STEPS, 0 only for 0, or 'nan'. */
export function level(v, m) {
  if (v === 'nan' || (typeof v === 'number' && Number.isNaN(v))) return 'nan';
  if (v === 'inf' || v === Infinity) return STEPS;
  if (v === '-inf' || v === -Infinity) return -STEPS;
  if (v === 0 || m === 0) return 0;
  const k = Math.max(1, Math.min(STEPS, Math.ceil((STEPS * Math.abs(v)) / m)));
  return v < 0 ? -k : k;
}

export function levelClass(k) {
  return k === 'nan' ? 'h-nan' : k < 0 ? `h-n${-k}` : `h-p${k}`;
}

/** A number as the readout and the table show it: the float32 value to 6 significant
 * digits (PyTorch's printed text has the rest). */
export function num(v) {
  if (typeof v !== 'number') return String(v);
  if (v === 0) return '0';
  const s = Math.abs(v) >= 1e-4 && Math.abs(v) < 1e6 ? String(Number(v.toPrecision(6))) : v.toExponential(4);
  return s;
}

/** The index of element k of a tensor of this shape, as PyTorch writes it: [1, 2]. */
export function indexText(shape, k) {
  if (!shape.length) return '';
  const out = [];
  let rest = k;
  for (let d = shape.length - 1; d >= 0; d--) {
    out.unshift(rest % shape[d]);
    rest = Math.floor(rest / shape[d]);
  }
  return `[${out.join(', ')}]`;
}

/** Whether a value is a tensor worth a heatmap: more than one element, and few enough. */
export function drawable(value) {
  if (!Array.isArray(value)) return false;
  const { values } = flatten(value);
  return values.length > 1 && values.length <= MAX_CELLS;
}

// -- in the graph: an SVG mini heatmap ----------------------------------------------------------

/** A <g> of cells at (x, y), at most maxW × maxH px, or null when it would not fit with
 * at least 1.5 px a cell. Returns {g, width, height}. */
export function miniSvg(value, x, y, maxW, maxH) {
  const { shape, values } = flatten(value);
  const { rows, cols } = grid(shape);
  if (values.length > MAX_CELLS) return null;
  const cell = Math.min(8, maxW / cols, maxH / rows);
  if (cell < 1.5) return null;
  const m = scaleOf(values);
  const g = document.createElementNS(SVG, 'g');
  g.setAttribute('class', 'mini-heat');
  const frame = document.createElementNS(SVG, 'rect');
  frame.setAttribute('class', 'mini-frame');
  frame.setAttribute('x', String(x - 0.5));
  frame.setAttribute('y', String(y - 0.5));
  frame.setAttribute('width', String(cols * cell + 1));
  frame.setAttribute('height', String(rows * cell + 1));
  g.appendChild(frame);
  values.forEach((v, k) => {
    const r = document.createElementNS(SVG, 'rect');
    r.setAttribute('x', String(x + (k % cols) * cell));
    r.setAttribute('y', String(y + Math.floor(k / cols) * cell));
    r.setAttribute('width', String(cell));
    r.setAttribute('height', String(cell));
    r.setAttribute('class', levelClass(level(v, m)));
    g.appendChild(r);
  });
  return { g, width: cols * cell, height: rows * cell };
}

// -- in the panels: a heatmap with its numbers ----------------------------------------------------

const figures = new WeakMap();      // value -> {label -> figure}: kept while its value is shown

function html(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A figure for one tensor: its label and shape, the heatmap (hover or focus a cell, or
 * move with the arrow keys, for its number), and on demand the numbers as a table and the
 * printed text. The same value and label give the same element, so a redraw keeps focus. */
export function figure(value, { label, caption = label, text = null, compact = false } = {}) {
  let byLabel = figures.get(value);
  if (!byLabel) { byLabel = new Map(); if (typeof value === 'object' && value) figures.set(value, byLabel); }
  const key = `${label}|${caption}|${compact}|${text}`;
  if (byLabel.has(key)) return byLabel.get(key);
  const made = build(value, label, caption, text, compact);
  byLabel.set(key, made);
  return made;
}

function build(value, label, captionText, text, compact) {
  const { shape, values } = flatten(value);
  const { rows, cols } = grid(shape);
  const fig = html('figure', `tensor${compact ? ' compact' : ''}`);
  const caption = html('figcaption', 'tensor-caption');
  caption.append(html('span', 'tensor-label', captionText), html('span', 'tensor-shape', shapeText(shape)));
  fig.append(caption);
  if (values.length === 1) {              // one number: the number itself
    fig.append(html('p', 'tensor-one', num(values[0])));
    if (text) fig.append(details(label, shape, values, rows, cols, text, false));
    return fig;
  }
  if (values.length > MAX_CELLS) {
    fig.append(html('p', 'tensor-note', `${values.length} values: too many to draw; the printed text has them.`));
  } else {
    const m = scaleOf(values);
    const heat = html('div', 'heat');
    heat.tabIndex = 0;
    heat.setAttribute('role', 'img');
    heat.setAttribute('aria-label', `Heatmap of ${label}, ${shapeWords(shape)}: blue below zero, orange above, `
      + `white at zero, the scale up to ${num(m)} either side. Arrow keys read each value; the table has them all.`);
    heat.style.setProperty('--cols', String(cols));
    heat.style.setProperty('--cell', `${cellSize(rows, cols, compact)}px`);
    values.forEach((v, k) => {
      const cell = html('span', `cell ${levelClass(level(v, m))}`);
      cell.dataset.k = String(k);
      heat.append(cell);
    });
    const readout = html('output', 'readout', `scale ±${num(m)}`);
    readout.setAttribute('aria-live', 'polite');
    wire(heat, readout, shape, values, m);
    fig.append(heat, readout);
  }
  fig.append(details(label, shape, values, rows, cols, text));
  return fig;
}

function cellSize(rows, cols, compact) {
  const room = compact ? 110 : 230;
  return Math.max(3, Math.min(compact ? 12 : 18, Math.floor(room / cols), Math.floor((compact ? 90 : 160) / rows)));
}

function wire(heat, readout, shape, values, m) {
  let at = -1;
  const show = (k) => {
    heat.querySelector('.cell.at')?.classList.remove('at');
    at = k;
    if (k < 0) { readout.textContent = `scale ±${num(m)}`; return; }
    heat.children[k].classList.add('at');
    readout.textContent = `${indexText(shape, k)} = ${num(values[k])}`.trim();
    // Whoever shows this tensor beside others (the optimizer's rule) follows the cell.
    heat.dispatchEvent(new CustomEvent('tensor-cell', { bubbles: true, detail: { k } }));
  };
  heat.addEventListener('pointerover', (e) => {
    const k = e.target.dataset?.k;
    if (k !== undefined) show(Number(k));
  });
  heat.addEventListener('pointerleave', () => { if (document.activeElement !== heat) show(-1); });
  heat.addEventListener('focus', () => show(at < 0 ? 0 : at));
  heat.addEventListener('blur', () => show(-1));
  heat.addEventListener('keydown', (e) => {
    const cols = Number(heat.style.getPropertyValue('--cols'));
    const moves = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: cols, ArrowUp: -cols, Home: -at, End: values.length - 1 - at };
    if (!(e.key in moves)) return;
    e.preventDefault();
    e.stopPropagation();          // the lab's own arrow keys step; here they read values
    const next = at + moves[e.key];
    if (next >= 0 && next < values.length) show(next);
  });
}

/** The numbers as a table (rows and columns by index) and PyTorch's printed text. */
function details(label, shape, values, rows, cols, text, table = true) {
  const box = html('details', 'tensor-values');
  box.append(html('summary', '', !table ? 'printed text' : text ? 'numbers and printed text' : 'numbers'));
  if (text) box.append(html('pre', 'tensor-text', text));
  if (table && values.length <= MAX_CELLS) {
    // Made when first opened: a step's tensors are drawn at every step, their tables read
    // now and then (a 32 × 32 gradient is a thousand cells).
    box.addEventListener('toggle', () => {
      if (box.open && !box.querySelector('table')) box.insertBefore(numbers(label, shape, values, rows, cols), box.children[1]);
    });
  }
  return box;
}

function numbers(label, shape, values, rows, cols) {
  const table = html('table', 'tensor-table');
  table.append(html('caption', 'visually-hidden', `${label}, ${shapeWords(shape)}: rows and columns by index`));
  const head = html('tr');
  head.append(html('td', 'corner'));
  for (let c = 0; c < cols; c++) head.append(th(String(c), 'col'));
  table.append(head);
  for (let r = 0; r < rows; r++) {
    const tr = html('tr');
    tr.append(rows > 1 || shape.length > 1 ? th(rowLabel(shape, r), 'row') : html('td', 'corner'));
    for (let c = 0; c < cols; c++) tr.append(html('td', '', num(values[r * cols + c])));
    table.append(tr);
  }
  return table;
}

function th(text, scope) {
  const cell = html('th', '', text);
  cell.scope = scope;
  return cell;
}

function rowLabel(shape, r) {
  return shape.length <= 2 ? String(r) : indexText(shape.slice(0, -1), r);
}
