// One question as a card: its program (highlighted, with line numbers), its parts, the
// buttons to check and to reveal, the model answer with its worked explanation and a link
// into the lab, and the student's self-mark.

import { withCode } from '../views/code.js';
import { lines } from './highlight.js';
import { answerLines, build, el } from './parts.js';

const MARKS = [['got', 'Got it'], ['partly', 'Partly'], ['missed', 'Missed']];

export function program(text, focus) {
  const code = el('code');
  lines(text).forEach((tokens, i) => {
    const line = el('span', { class: `line${i + 1 === focus ? ' focus' : ''}`, 'data-n': String(i + 1) });
    for (const [kind, t] of tokens) line.append(kind === 'space' || kind === 'text' ? document.createTextNode(t) : el('span', { class: `t-${kind}`, text: t }));
    code.append(line, document.createTextNode('\n'));
  });
  return el('pre', { class: 'q-program', tabindex: '0', 'aria-label': 'Program' }, code);
}

/** The card for question q (its number n in the set); `on` has check, reveal, mark. */
export function card(q, n, on) {
  const root = el('article', { class: 'q', id: `q-${q.id}`, 'data-id': q.id, 'data-kind': q.kind, 'aria-labelledby': `h-${q.id}` });
  root.append(el('header', { class: 'q-head' },
    el('span', { class: 'q-num', text: String(n) }),
    el('h2', { id: `h-${q.id}`, text: q.title }),
    el('span', { class: 'q-kind', text: `kind ${q.number} · seed ${q.seed}` })));
  root.append(el('p', { class: 'q-prompt' }, ...withCode(q.prompt)), program(q.program, q.focus_line));
  const inputs = new Map();
  const parts = el('ol', { class: 'parts', type: 'a' });
  for (const part of q.parts) {
    const built = build(part, q.id);
    inputs.set(part.id, built);
    parts.append(el('li', { class: 'part', 'data-part': part.id }, built.root,
                    el('p', { class: 'part-feedback', 'aria-live': 'polite' }),
                    el('div', { class: 'part-model', hidden: '' })));
  }
  root.append(parts);
  const check = el('button', { type: 'button', class: 'primary check', text: 'Check my answer' });
  const reveal = el('button', { type: 'button', class: 'reveal', text: 'Show model answer' });
  const score = el('span', { class: 'q-score', 'aria-live': 'polite' });
  root.append(el('div', { class: 'q-actions' }, check, reveal, score));
  const model = el('section', { class: 'model', hidden: '', 'aria-label': `Model answer to question ${n}` });
  root.append(model);
  const marks = el('div', { class: 'self-mark', role: 'group', 'aria-label': 'Mark yourself' },
                   el('span', { class: 'sub', text: 'Mark yourself:' }));
  for (const [value, label] of MARKS) {
    const b = el('button', { type: 'button', class: `mark mark-${value}`, 'data-mark': value, 'aria-pressed': 'false', text: label });
    b.addEventListener('click', () => on.mark(q, value));
    marks.append(b);
  }
  root.append(marks);
  const answers = () => Object.fromEntries([...inputs].map(([id, b]) => [id, b.read()]));
  check.addEventListener('click', () => on.check(q, answers()));
  reveal.addEventListener('click', () => on.reveal(q));
  return root;
}

/** Show a grade's marks (if any) and the model answer in a card. */
export function showModel(root, answer, grade = null) {
  root.classList.add('revealed');
  for (const part of answer.parts) {
    const li = root.querySelector(`.part[data-part="${CSS.escape(part.id)}"]`);
    if (!li) continue;
    const box = li.querySelector('.part-model');
    box.replaceChildren(el('p', { class: 'model-label', text: 'Model answer' }),
                        el('ul', {}, ...answerLines(part).map((t) => el('li', {}, ...withCode(t)))));
    if (part.why) box.append(el('p', { class: 'why' }, ...withCode(part.why)));
    box.hidden = false;
    const mark = grade?.parts.find((p) => p.id === part.id);
    const feedback = li.querySelector('.part-feedback');
    if (mark) {
      li.dataset.result = mark.correct ? 'right' : mark.score > 0 ? 'partly' : 'wrong';
      feedback.replaceChildren(el('strong', { text: mark.correct ? '✓ ' : mark.score > 0 ? '◐ ' : '✗ ' }),
                               ...withCode(`${Math.round(mark.score * 100)}%: ${mark.feedback}`));
    }
  }
  const model = root.querySelector('.model');
  const link = el('a', { class: 'lab-link', href: answer.lab.url, text: `Open this program in the lab at step ${answer.lab.step}` });
  model.replaceChildren(el('h3', { text: 'Worked answer' }),
                        el('ol', { class: 'explain' }, ...answer.explanation.map((t) => el('li', {}, ...withCode(t)))),
                        el('p', {}, link));
  model.hidden = false;
  if (grade) root.querySelector('.q-score').textContent = `Checked: ${Math.round(grade.score * 100)}%`;
}

export function showMark(root, value) {
  for (const b of root.querySelectorAll('.mark')) b.setAttribute('aria-pressed', String(b.dataset.mark === value));
}
