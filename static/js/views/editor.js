// The program: a textarea with a line-number gutter, and an overlay that underlines the
// text an error points at. Everything typed reaches the page as text, never as HTML.

import { frameAt, shownStep } from '../store.js';

export function render(root, state) {
  const area = root.querySelector('textarea');
  const replaced = area.value !== state.program;
  if (replaced) area.value = state.program;
  const lines = state.program.split('\n');
  const rows = String(Math.max(8, Math.min(24, lines.length + 1)));
  if (area.getAttribute('rows') !== rows) area.setAttribute('rows', rows);
  const error = shownError(state);
  const frame = frameAt(state.run, shownStep(state));
  const active = frame.pass && state.run.source === state.program ? frame.pass.line : null;
  renderGutter(root.querySelector('.gutter'), lines.length, error?.line ?? null, active);
  renderMarks(root.querySelector('.marks'), lines, error);
  root.classList.toggle('has-error', Boolean(error));
  if (replaced) syncScroll(root);
}

/** The error to underline: the program's, or the step's; only while the text is the one
 * that was run (after an edit the positions would point at the wrong text). */
function shownError(state) {
  const run = state.run;
  if (run.source !== state.program) return null;
  const e = run.error;
  if (e && e.line) return e;
  return null;
}

function renderGutter(gutter, count, errorLine, activeLine) {
  gutter.dataset.digits = String(String(count).length);
  if (gutter.childElementCount !== count) {
    const items = [];
    for (let i = 1; i <= count; i++) {
      const div = document.createElement('div');
      div.textContent = String(i);
      items.push(div);
    }
    gutter.replaceChildren(...items);
  }
  [...gutter.children].forEach((div, i) => {
    const cls = `${i + 1 === errorLine ? 'err' : ''}${i + 1 === activeLine ? ' active' : ''}`.trim();
    if (div.className !== cls) div.className = cls;
  });
}

function renderMarks(marks, lines, error) {
  const key = error ? `${error.line}:${error.col}:${lines.join('\n')}` : '';
  if (marks.dataset.key === key) return;
  marks.dataset.key = key;
  if (!error) { marks.replaceChildren(); return; }
  const index = Math.min(error.line, lines.length) - 1;
  const [start, end] = span(lines[index] ?? '', error);
  const before = lines.slice(0, index).map((l) => `${l}\n`).join('') + lines[index].slice(0, start);
  const mark = document.createElement('mark');
  mark.className = 'err';
  mark.textContent = lines[index].slice(start, end) || '\u00a0\u00a0\u00a0';
  marks.replaceChildren(document.createTextNode(before), mark,
                        document.createTextNode(lines[index].slice(end)));
}

/** [start, end) of the text to underline. The server gives where the offending text
 * starts, not where it ends: a syntax error marks one token; rejected text (an expression
 * or statement) and a runtime error (a statement) run to the end of the line. */
export function span(line, error) {
  const code = line.replace(/\s*#.*$/, '').trimEnd();
  const first = Math.max(0, line.search(/\S/));
  if (!error.col || (error.type !== 'SyntaxError' && error.type !== 'UnsupportedError')) {
    return [first, Math.max(first, code.length)];
  }
  const start = Math.max(0, Math.min(error.col - 1, line.length));
  if (start >= code.length) return [start, start];
  if (error.type === 'UnsupportedError') return [start, code.length];
  const m = /^(?:[A-Za-z_]\w*|\d[\w.]*|\*\*|\S)/.exec(line.slice(start));
  return [start, start + (m ? m[0].length : 1)];
}

export function syncScroll(root) {
  const area = root.querySelector('textarea');
  root.querySelector('.gutter').scrollTop = area.scrollTop;
  const marks = root.querySelector('.marks');
  marks.scrollTop = area.scrollTop;
  marks.scrollLeft = area.scrollLeft;
}
