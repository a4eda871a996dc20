// The presenter's keys, as a clicker and a keyboard send them: a pure map from a key to a
// command, so the speaker view can forward its keys and tests can read the table.

const KEYS = {
  PageDown: 'next', ArrowRight: 'next', ' ': 'next', ArrowDown: 'next',
  PageUp: 'prev', ArrowLeft: 'prev', ArrowUp: 'prev',
  Home: 'first', End: 'last',
  p: 'play', b: 'blank', '.': 'blank', f: 'fullscreen',
  n: 'next-program', N: 'prev-program',
  q: 'ask', r: 'reveal', Escape: 'close', j: 'join', s: 'notes', e: 'editor',
  '+': 'zoom-in', '=': 'zoom-in', '-': 'zoom-out', 0: 'fit',
};

/** {command, program?} for a key press, or null. 1–9 jump to a program of the lesson;
 * clickers send PageDown/PageUp (and "." or b to blank the screen). */
export function command(key, { shift = false } = {}) {
  if (/^[1-9]$/.test(key)) return { command: 'program', program: Number(key) - 1 };
  const k = key.length === 1 && !shift ? key.toLowerCase() : key;
  const name = KEYS[k === 'n' && shift ? 'N' : k];
  return name ? { command: name } : null;
}

export const HELP = [
  ['→ PgDn Space', 'next step'], ['← PgUp', 'previous step'], ['Home End', 'first, last step'],
  ['P', 'play / pause'], ['N ⇧N', 'next, previous program'], ['1–9', 'program of the lesson'],
  ['Q', 'ask the room'], ['R', 'reveal'], ['B', 'blank screen'], ['F', 'full screen'],
  ['J', 'join code'], ['S', 'speaker view'], ['E', 'editor'],
];
