// The program as the lab shows code: line numbers, and tokens marked by kind (keywords,
// numbers, names of functions, operators). Pure: it returns [kind, text] pairs per line;
// the view makes text nodes of them, never HTML.

const TOKEN = /(\s+)|(#.*$)|(\b(?:import|from|with|as|lambda|def|return|True|False|None)\b)|(\d+\.?\d*(?:e[+-]?\d+)?)|([A-Za-z_]\w*)|(\*\*|[-+*/=(),.[\]:])|(.)/g;

export function tokens(line) {
  const out = [];
  let previous = '';
  for (const m of line.matchAll(TOKEN)) {
    const [text, space, comment, keyword, number, name, op] = m;
    let kind = 'text';
    if (space) kind = 'space';
    else if (comment) kind = 'comment';
    else if (keyword) kind = 'keyword';
    else if (number) kind = 'number';
    else if (name) kind = name === 'torch' ? 'module' : previous === '.' ? 'call' : 'name';
    else if (op) kind = 'op';
    out.push([kind, text]);
    if (kind !== 'space') previous = text;
  }
  return out;
}

export function lines(program) {
  return program.replace(/\n$/, '').split('\n').map(tokens);
}
