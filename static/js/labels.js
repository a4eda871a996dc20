// How nodes and values are named on the page: pure string functions.

/** AccumulateGrad's sequence number is UINT64_MAX, more than a JS number holds exactly. */
export function isAccumulate(node) {
  return node.name === 'AccumulateGrad';
}

export function seqText(node) {
  return isAccumulate(node) || node.seq > Number.MAX_SAFE_INTEGER ? 'MAX' : `#${node.seq}`;
}

/** "MulBackward0 #2", "AccumulateGrad(w)". */
export function nodeLabel(node) {
  if (!node) return '?';
  return isAccumulate(node) ? `AccumulateGrad(${node.leaf})` : `${node.name} ${seqText(node)}`;
}

/** Where a gradient goes: a leaf by its name, any other node by its label. */
export function targetLabel(node) {
  return node && isAccumulate(node) ? node.leaf : nodeLabel(node);
}

/** "tensor(28.)" → "28", "tensor(0.0500)" → "0.0500", "tensor([1., 2.])" → "[1., 2.]". */
export function short(text) {
  if (text === null || text === undefined) return 'None';
  let s = String(text).replace(/\s+/g, ' ').trim();
  const m = /^tensor\((.*)\)$/.exec(s);
  if (m) s = m[1].replace(/, (dtype|grad_fn|requires_grad)=.*$/, '');
  return /^-?\d+\.$/.test(s) ? s.slice(0, -1) : s;
}

export function isVector(text) {
  return short(text).startsWith('[');
}

/** "a", "a and b", "a, b and c". */
export function listing(items) {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

export function plural(n, one, many) {
  return n === 1 ? one : many;
}

/** A value inside a formula: negative numbers in parentheses. */
export function operand(text) {
  const s = short(text);
  return s.startsWith('-') ? `(${s})` : s;
}

/** Shorten to fit a node, keeping the start. */
export function clip(text, max) {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}
