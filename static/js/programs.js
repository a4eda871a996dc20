// "backward() again" and friends are only new program text: these pure functions rewrite
// the program; the server runs it and computes everything.

const BACKWARD = /^([A-Za-z_]\w*)\.backward\((.*)\)\s*(#.*)?$/;
const ASSIGN = /^([A-Za-z_]\w*)\s*=(?!=)\s*(.+)$/;
const LEAF = /^[A-Za-z_]\w*\s*=\s*(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|torch\.tensor\(.*\))\s*(?:#.*)?$/;
const OPENING = /^(?:\s*(?:#.*)?|import\s+torch\s*(?:#.*)?)$/;

function lines(source) {
  return source.replace(/\s+$/, '').split('\n');
}

function text(ls) {
  return `${ls.join('\n')}\n`;
}

/** Every `name.backward(...)` line: {index, name, args}. */
export function backwardCalls(source) {
  const out = [];
  lines(source).forEach((line, index) => {
    const m = BACKWARD.exec(line);
    if (m) out.push({ index, name: m[1], args: m[2] });
  });
  return out;
}

/** The variable backward() is called on: the last call's, or the last assignment's. */
export function outputOf(source) {
  const calls = backwardCalls(source);
  if (calls.length) return calls.at(-1).name;
  const assigned = lines(source).map((l) => ASSIGN.exec(l)).filter(Boolean);
  return assigned.length ? assigned.at(-1)[1] : null;
}

/** With no backward() call the lab calls it on the last assignment, at the end: write that
 * call out before appending anything, so it stays where it was. */
export function explicit(source) {
  if (backwardCalls(source).length) return text(lines(source));
  const out = outputOf(source);
  return out ? text([...lines(source), `${out}.backward()`]) : text(lines(source));
}

/** (a) The same graph again: append `out.backward()`; the earlier call gets or loses
 * `retain_graph=True`. */
export function backwardAgain(source, retain) {
  const base = explicit(source);
  const out = outputOf(base);
  if (!out) return null;
  return setRetain(text([...lines(base), '', '# backward() again, on the same graph', `${out}.backward()`]), retain);
}

/** Add or remove `retain_graph=True` on the next-to-last backward() call. */
export function setRetain(source, on) {
  const calls = backwardCalls(source);
  if (calls.length < 2) return source;
  const call = calls.at(-2);
  const args = splitArgs(call.args).filter((a) => !/^retain_graph\s*=/.test(a));
  if (on) args.push('retain_graph=True');
  const ls = lines(source);
  const comment = /\)\s*(#.*)$/.exec(ls[call.index]);
  ls[call.index] = `${call.name}.backward(${args.join(', ')})${comment ? `  ${comment[1]}` : ''}`;
  return text(ls);
}

export function retainOf(source) {
  const calls = backwardCalls(source);
  return calls.length >= 2 && /retain_graph\s*=\s*True/.test(calls.at(-2).args);
}

function splitArgs(args) {
  const out = [];
  let depth = 0;
  let current = '';
  for (const ch of args) {
    if (ch === ',' && depth === 0) { out.push(current.trim()); current = ''; continue; }
    if ('([{'.includes(ch)) depth += 1;
    if (')]}'.includes(ch)) depth -= 1;
    current += ch;
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

/** (b) A new forward pass: the first pass's forward lines again, then backward(). */
export function newForward(source) {
  const base = explicit(source);
  const ls = lines(base);
  const calls = backwardCalls(base);
  if (!calls.length) return null;
  let start = 0;
  while (start < ls.length && (LEAF.test(ls[start]) || OPENING.test(ls[start]))) start += 1;
  const forward = ls.slice(start, calls[0].index).filter((l) => ASSIGN.test(l));
  if (!forward.length) return null;
  return text([...ls, '', '# a new forward pass: new nodes, new sequence numbers', ...forward,
               `${calls[0].name}.backward()`]);
}

/** (c) zero_grad(): `name.grad = None` for every leaf that requires grad. */
export function zeroGrad(source, leaves) {
  if (!leaves.length) return null;
  return text([...lines(explicit(source)), '', '# zero_grad(): forget the gradients',
               ...leaves.map((name) => `${name}.grad = None`)]);
}
