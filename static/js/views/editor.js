// The program: a textarea with a line-number gutter, and an overlay under it that draws the
// error's underline and the lab's shorthand notes ("→ torch.tensor(3.0, requires_grad=True)").
// The overlay holds the whole text, in the textarea's font, moved with the textarea's scroll
// by a transform, so that a mark sits under its text however the program is scrolled.
// Everything typed reaches the page as text, never as HTML.

import { frameAt, shownStep } from '../store.js';

export function render(root, state) {
  const area = root.querySelector('textarea');
  const replaced = area.value !== state.program;
  if (replaced) area.value = state.program;
  const lines = state.program.split('\n');
  const rows = String(Math.max(8, Math.min(24, lines.length + 1)));
  if (area.getAttribute('rows') !== rows) area.setAttribute('rows', rows);
  const current = state.run.source === state.program;
  const error = current && state.run.error?.line ? state.run.error : null;
  const frame = frameAt(state.run, shownStep(state));
  const active = frame.pass && current ? frame.pass.line : null;
  const bands = current ? lineBands(state, frame) : new Map();
  renderGutter(root.querySelector('.gutter-lines'), lines.length, error, active, bands);
  const noteByLine = current ? fitted(notes(state.run), lines, area) : new Map();
  renderMarks(root.querySelector('.marks-text'), lines, error, noteByLine, bands);
  root.classList.toggle('has-error', Boolean(error));
  syncScroll(root);
}

/** Lines drawn with a band: a custom Function's backward() while its node's step is shown
 * ('code'), and the line a console or outside entry asked for ('marked'). */
export function lineBands(state, frame) {
  const out = new Map();
  const node = frame.step ? frame.byId.get(frame.step.node) : null;
  if (node?.code) for (let line = node.code[0]; line <= node.code[1]; line++) out.set(line, 'code');
  if (state.ui.marked) out.set(state.ui.marked, 'marked');
  return out;
}

/** The shorthand's meaning beside the lines where it acts, from the server's `program`:
 * line number → [note, a shorter one]. Only while the text is the one that ran. */
export function notes(run) {
  const out = new Map();
  const program = run.program;
  if (!program || program.kind !== 'shorthand') return out;
  for (const leaf of program.shorthand) out.set(leaf.line, [`→ ${leaf.expanded}`, '→ requires_grad=True']);
  const implicit = program.implicit_output;
  const pass = run.passes.find((p) => p.output === implicit);
  if (implicit && pass) {
    const [full, brief] = out.get(pass.line) ?? ['', ''];
    const then = `→ then ${implicit}.backward()`;
    out.set(pass.line, full ? [`${full}; ${then}`, `${brief}; ${then}`] : [then, `→ ${implicit}.backward()`]);
  }
  return out;
}

let charWidth = null;

/** Each note in full where it fits beside its line in the visible width, else the short
 * one (the program's note under the editor says it in full). */
function fitted(noteByLine, lines, area) {
  // Most programs have no notes: then the width is not read, which would lay the page out
  // once more in the middle of every paint (the gutter was just written).
  if (noteByLine.size === 0) return noteByLine;
  if (charWidth === null) {
    const g = document.createElement('canvas').getContext('2d');
    g.font = `12px ${getComputedStyle(area).fontFamily}`;
    charWidth = g.measureText('0'.repeat(40)).width / 40;
  }
  const room = area.clientWidth - 24;
  const out = new Map();
  for (const [line, [full, brief]] of noteByLine) {
    const used = ((lines[line - 1] ?? '').length + 2) * charWidth * (14 / 12);
    out.set(line, used + full.length * charWidth <= room ? full : brief);
  }
  return out;
}

function renderGutter(gutter, count, error, activeLine, bands) {
  gutter.parentElement.dataset.digits = String(String(count).length);
  if (gutter.childElementCount !== count) {
    const items = [];
    for (let i = 1; i <= count; i++) {
      const div = document.createElement('div');
      div.textContent = String(i);
      items.push(div);
    }
    gutter.replaceChildren(...items);
  }
  const first = error ? error.line : null;
  const last = error ? error.end_line ?? error.line : null;
  [...gutter.children].forEach((div, i) => {
    const line = i + 1;
    const err = first !== null && line >= first && line <= last;
    const cls = `${err ? 'err' : ''}${line === activeLine ? ' active' : ''} ${bands.get(line) ?? ''}`.trim();
    if (div.className !== cls) div.className = cls;
  });
}

function renderMarks(marks, lines, error, noteByLine, bands) {
  const key = JSON.stringify([lines, error && [error.line, error.col, error.end_line, error.end_col, error.type],
                              [...noteByLine], [...bands]]);
  if (marks.dataset.key === key) return;
  marks.dataset.key = key;
  const spans = error ? errorSpans(lines, error) : new Map();
  const parts = [];
  lines.forEach((line, i) => {
    const band = bands.get(i + 1);
    const from = parts.length;
    const span = spans.get(i + 1);
    if (span) {
      const [start, end] = span;
      const mark = document.createElement('mark');
      mark.className = 'err';
      mark.textContent = line.slice(start, end) || '\u00a0\u00a0\u00a0';
      parts.push(document.createTextNode(line.slice(0, start)), mark, document.createTextNode(line.slice(end)));
    } else {
      parts.push(document.createTextNode(line));
    }
    const note = noteByLine.get(i + 1);
    if (note) {
      const span = document.createElement('span');
      span.className = 'shorthand';
      span.textContent = `  ${note}`;
      parts.push(span);
    }
    if (band) {
      const wrap = document.createElement('span');
      wrap.className = `band ${band}`;
      wrap.append(...parts.splice(from));
      parts.push(wrap);
    }
    parts.push(document.createTextNode('\n'));
  });
  marks.replaceChildren(...parts);
}

/** line → [start, end) of the text to underline on that line (0-based columns), from the
 * server's `line:col` to `end_line:end_col` (end_col is 1-based, just past the end). */
export function errorSpans(lines, error) {
  const out = new Map();
  const first = Math.min(error.line, lines.length);
  if (error.end_line == null || error.end_col == null || !error.col) {
    out.set(first, span(lines[first - 1] ?? '', error));
    return out;
  }
  const last = Math.min(error.end_line, lines.length);
  for (let line = first; line <= last; line++) {
    const text = lines[line - 1] ?? '';
    const start = line === first ? Math.min(error.col - 1, text.length) : Math.max(0, text.search(/\S/));
    const end = line === last ? Math.min(error.end_col - 1, text.length) : text.length;
    out.set(line, [start, Math.max(start, end)]);
  }
  return out;
}

/** [start, end) when the server gives only where the offending text starts: one token. */
export function span(line, error) {
  const first = Math.max(0, line.search(/\S/));
  if (!error.col) return [first, Math.max(first, line.replace(/\s*#.*$/, '').trimEnd().length)];
  const start = Math.max(0, Math.min(error.col - 1, line.length));
  const m = /^(?:[A-Za-z_]\w*|\d[\w.]*|\*\*|\S)/.exec(line.slice(start));
  return [start, start + (m ? m[0].length : 0)];
}

/** The gutter and the overlay follow the textarea's scroll (a transform: an element with
 * less content than the textarea could not scroll as far). */
export function syncScroll(root) {
  const area = root.querySelector('textarea');
  const top = area.scrollTop;
  const left = area.scrollLeft;
  const marks = root.querySelector('.marks-text');
  const gutter = root.querySelector('.gutter-lines');
  const moveMarks = `translate(${-left}px, ${-top}px)`;
  const moveGutter = `translateY(${-top}px)`;
  if (marks.style.transform !== moveMarks) marks.style.transform = moveMarks;
  if (gutter.style.transform !== moveGutter) gutter.style.transform = moveGutter;
}
