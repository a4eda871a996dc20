// What kind of program ran (the server's `program`): for the lab's shorthand, one line that
// says where it acts (the editor shows each expansion beside its line), and the state of
// "Copy as PyTorch", whose script the server writes.

import { withCode } from './code.js';

export function render(note, copy, state) {
  const run = state.run;
  const program = run.source === state.program ? run.program : null;
  copy.disabled = !program?.as_pytorch;
  const text = program ? describe(program, state.program) : '';
  if (note.dataset.text === text) return;
  note.dataset.text = text;
  note.hidden = !text;
  note.replaceChildren(...withCode(text));
}

/** One sentence: what the shorthand means, with the first leaf's line as the example. */
export function describe(program, source) {
  if (program.kind !== 'shorthand') return 'Plain PyTorch: it runs exactly as written.';
  const parts = [];
  const leaves = program.shorthand;
  if (leaves.length) {
    const first = leaves[0];
    const line = source.split('\n')[first.line - 1] ?? '';
    const written = first.line === first.end_line ? line.slice(first.col - 1, first.end_col - 1) : `${first.name} = …`;
    const more = leaves.length > 1 ? ' (so does each line marked →)' : '';
    parts.push(`\`${written}\` stands for \`${first.name} = ${first.expanded}\`${more}`);
  }
  if (program.implicit_output) parts.push(`the lab calls \`${program.implicit_output}.backward()\` at the end`);
  if (!parts.length) return 'Lab shorthand: `torch` is there without an import.';
  return `Lab shorthand: ${parts.join('; ')}.`;
}
