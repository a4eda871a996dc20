// The student's marks, kept in this browser (localStorage, no account): for each question
// id its kind, the checked score (0 to 1) and the self-mark (got / partly / missed).
// `summary` is pure: marks → one row per kind.

const KEY = 'autograd-lab.quiz.marks';

export function load(storage = globalThis.localStorage) {
  try {
    const value = JSON.parse(storage?.getItem(KEY) ?? '{}');
    return value && typeof value === 'object' ? value : {};
  } catch {
    return {};
  }
}

export function save(marks, storage = globalThis.localStorage) {
  try { storage?.setItem(KEY, JSON.stringify(marks)); } catch { /* private mode: kept in memory */ }
}

export function record(marks, question, change) {
  const old = marks[question.id] ?? { kind: question.kind, title: question.title };
  return { ...marks, [question.id]: { ...old, ...change } };
}

export function summary(marks, titles = {}) {
  const rows = new Map();
  for (const m of Object.values(marks)) {
    const row = rows.get(m.kind) ?? { kind: m.kind, title: titles[m.kind] ?? m.title ?? m.kind,
                                       answered: 0, scored: 0, total: 0, got: 0, partly: 0, missed: 0 };
    row.answered += 1;
    if (typeof m.score === 'number') { row.scored += 1; row.total += m.score; }
    if (m.self === 'got' || m.self === 'partly' || m.self === 'missed') row[m.self] += 1;
    rows.set(m.kind, row);
  }
  return [...rows.values()].map((r) => ({ ...r, mean: r.scored ? r.total / r.scored : null }));
}
