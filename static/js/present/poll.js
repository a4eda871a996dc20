// "Ask the room" on the presenter's screen: the question, a bar per candidate that grows
// as the room answers, and after the reveal the engine's answer with its reason.

function el(tag, className, text = null) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== null) node.textContent = text;
  return node;
}

/** poll: {question, answer, tally, revealed} (answer stays hidden until revealed). */
export function render(root, poll) {
  root.hidden = !poll;
  if (!poll) { root.replaceChildren(); return; }
  const { question, tally, revealed } = poll;
  const counts = tally?.counts ?? {};
  const total = tally?.answers ?? 0;
  const most = Math.max(1, ...Object.values(counts));
  const rows = question.candidates.map((c) => {
    const n = counts[String(c.node)] ?? 0;
    const row = el('li', 'p-choice');
    row.dataset.node = String(c.node);
    const right = revealed && revealed.answer.node === c.node;
    row.classList.toggle('right', Boolean(right));
    const bar = el('span', 'p-bar');
    bar.style.setProperty('--share', String(n / most));
    row.append(el('span', 'p-choice-label', c.label), bar, el('span', 'p-count', String(n)));
    return row;
  });
  const list = el('ol', 'p-choices');
  list.append(...rows);
  const children = [el('h2', null, question.question), list];
  const said = total === 1 ? '1 answer' : `${total} answers`;
  if (revealed) {
    children.push(el('p', 'p-poll-answer', `The engine pops ${revealed.answer.label}.`),
                  el('p', 'p-poll-reason', revealed.answer.reason),
                  el('p', 'p-poll-hint', `${said} · → goes on`));
  } else {
    children.push(el('p', 'p-poll-hint', `${said} so far · R reveals · Esc closes`));
  }
  root.replaceChildren(...children);
  root.dataset.answers = String(total);
  root.dataset.revealed = revealed ? '1' : '';
}
