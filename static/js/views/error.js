// The message under the editor: where the error is and what to do, in the server's words.
// What it says is decided by the error's kind (the server's: rejected, forward, backward,
// limit, internal; the page's own: unreachable), never by the message's text.

import { withCode } from './code.js';

export function render(root, state) {
  const run = state.run;
  const e = run.error;
  const stale = run.source !== state.program && e?.kind !== 'unreachable';
  if (!e || stale) { root.hidden = true; root.replaceChildren(); return; }
  root.hidden = false;
  const head = document.createElement('strong');
  head.textContent = `${where(e)} · ${e.type}`;
  const message = document.createElement('p');
  message.className = 'message';
  message.replaceChildren(...withCode(e.message));
  const hint = document.createElement('p');
  hint.className = 'hint';
  hint.replaceChildren(...withCode(advice(e)));
  root.dataset.kind = e.kind ?? '';
  root.replaceChildren(head, message, hint);
}

function where(e) {
  if (!e.line) return e.kind === 'unreachable' ? 'No answer' : 'Error';
  return e.kind === 'rejected' && e.col ? `Line ${e.line}, column ${e.col}` : `Line ${e.line}`;
}

export function advice(e) {
  switch (e.kind) {
    case 'rejected':
      return e.type === 'SyntaxError'
        ? 'This is not valid Python: fix the underlined text, then press Run.'
        : 'The lab did not run this program: rewrite the underlined text as the message says, then press Run.';
    case 'forward':
      return 'PyTorch raises this too, before any `backward()` call: the program stopped at the underlined line.';
    case 'backward':
      return 'PyTorch raises this too, in the underlined `backward()` call: the page shows its message word for word.';
    case 'limit':
      return 'The program went past one of the lab\u2019s limits (they keep the server quick for everyone): make it smaller.';
    case 'internal':
      return 'This is a fault of the lab\u2019s, not of your program: please report it with the program.';
    case 'unreachable':
      return 'The server did not answer: check that it is running, then press Run. Nothing ran.';
    default:
      return 'The program stopped here.';
  }
}
