// The message under the editor: where the error is and what to do, in the server's words.

export function render(root, state) {
  const run = state.run;
  const e = run.error;
  const stale = run.source !== state.program;
  if (!e || stale) { root.hidden = true; root.replaceChildren(); return; }
  root.hidden = false;
  const head = document.createElement('strong');
  const where = e.line ? `Line ${e.line}${e.col && (e.type === 'SyntaxError' || e.type === 'UnsupportedError') ? `, column ${e.col}` : ''}` : 'Error';
  head.textContent = `${where} · ${e.type}`;
  const message = document.createElement('p');
  message.textContent = e.message;
  const hint = document.createElement('p');
  hint.className = 'hint';
  hint.textContent = advice(e);
  root.replaceChildren(head, message, hint);
}

function advice(e) {
  if (e.type === 'SyntaxError') return 'This is not valid Python: fix the underlined text, then press Run.';
  if (e.type === 'UnsupportedError') return 'Rewrite the underlined text as the message says, then press Run.';
  if (e.type === 'NetworkError') return 'The server did not answer: check that it is running, then press Run.';
  if (e.message.startsWith('Trying to backward through the graph a second time')) {
    return 'PyTorch raises this too. Step through to see the node that needed a freed value, or tick retain_graph=True.';
  }
  return 'PyTorch raises the same error for this program: the page shows it word for word.';
}
