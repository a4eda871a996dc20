// The shareable part of the state lives in the URL's hash:
// #p=<program, base64url of UTF-8>&s=<step>&v=<speed>&t=<theme>&r=<retain>&n=<note>
//  &f=<the first pass kept step by step>&e=<the seed of that run>

const NOTES = new Set(['again', 'again-retain', 'forward', 'zero']);

export function encodeProgram(program) {
  const bytes = new TextEncoder().encode(program);
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function decodeProgram(text) {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

/** The hash for a state: program, shown step and settings. */
export function toHash(state, step) {
  const params = new URLSearchParams();
  params.set('p', encodeProgram(state.program));
  params.set('s', String(step));
  if (state.settings.speed !== 1) params.set('v', String(state.settings.speed));
  if (state.settings.theme !== 'auto') params.set('t', state.settings.theme);
  if (state.settings.retain) params.set('r', '1');
  if (state.note) params.set('n', state.note);
  if (state.passesFrom) {
    params.set('f', String(state.passesFrom));
    if (state.run.seed !== null && state.run.seed !== undefined) params.set('e', String(state.run.seed));
  }
  return `#${params.toString()}`;
}

/** What a hash asks for; anything malformed is ignored, never trusted. */
export function fromHash(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const out = {};
  try {
    if (params.has('p')) out.program = decodeProgram(params.get('p'));
  } catch {
    // a broken link: start from the default program
  }
  const step = Number.parseInt(params.get('s') ?? '', 10);
  if (Number.isFinite(step) && step >= 0) out.step = step;
  const speed = Number.parseFloat(params.get('v') ?? '');
  if (Number.isFinite(speed)) out.speed = speed;
  if (params.has('t')) out.theme = params.get('t');
  if (params.get('r') === '1') out.retain = true;
  if (NOTES.has(params.get('n'))) out.note = params.get('n');
  const from = Number.parseInt(params.get('f') ?? '', 10);
  if (Number.isFinite(from) && from > 0) out.passesFrom = from;
  const seed = Number.parseInt(params.get('e') ?? '', 10);
  if (out.passesFrom && Number.isSafeInteger(seed) && seed >= 0) out.seed = seed;
  return out;
}
