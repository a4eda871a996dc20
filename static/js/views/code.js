// Messages quote code between backticks (`y = ...`): those parts become <code> elements,
// built as text nodes, so that nothing the server or the user wrote is read as HTML.

export function withCode(text) {
  return String(text).split(/`([^`\n]+)`/).map((part, i) => {
    if (i % 2 === 0) return document.createTextNode(part);
    const code = document.createElement('code');
    code.textContent = part;
    return code;
  });
}
