// What the program printed and the warnings PyTorch gave, in order, each with the line that
// wrote it: a click (or Enter) on the line number marks that line in the editor. Warnings
// look apart from print output and from errors (those are under the editor, in orange).

export function render(root, state) {
  const run = state.run;
  const lines = run.source === state.program ? run.console : [];
  const list = root.querySelector('ol');
  if (root.hidden === !lines.length && list.lines === lines) return;
  root.hidden = !lines.length;
  list.lines = lines;
  list.replaceChildren(...lines.map(item));
}

function item(out) {
  const li = document.createElement('li');
  li.className = `out ${out.kind}`;
  li.append(lineButton(out.line));
  if (out.kind === 'warning') {
    const tag = document.createElement('span');
    tag.className = 'out-tag';
    tag.textContent = 'warning';
    li.append(tag);
  }
  const text = document.createElement('pre');
  text.textContent = out.text;
  li.append(text);
  return li;
}

/** A line number that marks its line in the editor (app.js listens for data-line). */
export function lineButton(line) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'line-link';
  button.dataset.line = String(line);
  button.textContent = `line ${line}`;
  button.title = `Mark line ${line} in the program`;
  return button;
}
