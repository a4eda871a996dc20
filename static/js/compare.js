// Two passes side by side: which nodes one has and the other lacks, where the pop orders
// differ, and which gradients differ. Pure functions over two trace documents' passes (the
// server's numbers, compared as they are), so the browser tests can call them directly.

/** A node's identity across two traces: an AccumulateGrad by its leaf, any other node by
 * its class and sequence number (the same program records the same numbers). */
export function nodeKey(step) {
  return step.leaf !== null && step.leaf !== undefined ? `AccumulateGrad(${step.leaf})` : `${step.name}#${step.seq}`;
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** The differences between pass `a` and pass `b` (each a trace's pass, with steps), and
 * between the two programs' final `.grad`s. */
export function diff(a, b, gradsA = {}, gradsB = {}) {
  const keysA = a.steps.map(nodeKey);
  const keysB = b.steps.map(nodeKey);
  const inA = new Set(keysA);
  const inB = new Set(keysB);
  const removed = keysA.filter((k) => !inB.has(k));
  const added = keysB.filter((k) => !inA.has(k));
  const commonA = keysA.filter((k) => inB.has(k));
  const commonB = keysB.filter((k) => inA.has(k));
  const moved = commonA.filter((k, i) => commonB[i] !== k);
  const byKey = (steps) => new Map(steps.map((s) => [nodeKey(s), s]));
  const stepsA = byKey(a.steps);
  const stepsB = byKey(b.steps);
  const gradients = commonA.filter((k) => !same(stepsA.get(k).grad, stepsB.get(k).grad))
    .map((k) => ({ node: k, a: stepsA.get(k).grad, b: stepsB.get(k).grad }));
  const leaves = [...new Set([...Object.keys(gradsA), ...Object.keys(gradsB)])];
  const grads = leaves.filter((l) => !same(gradsA[l] ?? null, gradsB[l] ?? null))
    .map((l) => ({ leaf: l, a: gradsA[l] ?? null, b: gradsB[l] ?? null }));
  return { removed, added, moved, orderA: commonA, orderB: commonB, gradients, grads };
}

const list = (xs) => xs.join(', ');

/** The differences in words, one sentence each; one sentence when there are none. */
export function explain(d) {
  const out = [];
  if (d.removed.length) out.push(`Only the left pass pops ${list(d.removed)}.`);
  if (d.added.length) out.push(`Only the right pass pops ${list(d.added)}.`);
  if (d.moved.length) {
    out.push(`The nodes both passes pop come in a different order: ${list(d.orderA)} on the left, ${list(d.orderB)} on the right ` +
             '(the ready queue pops the highest sequence number first, so new or renumbered nodes move the others).');
  }
  for (const g of d.gradients) out.push(`${g.node} receives ${JSON.stringify(g.a)} on the left and ${JSON.stringify(g.b)} on the right.`);
  for (const g of d.grads) out.push(`${g.leaf}.grad ends as ${JSON.stringify(g.a)} on the left and ${JSON.stringify(g.b)} on the right.`);
  if (!out.length) out.push('The two passes pop the same nodes in the same order with the same gradients.');
  return out;
}
