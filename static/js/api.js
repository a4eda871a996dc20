// The only module that talks to the server.

export async function getPresets() {
  const response = await fetch('/api/presets', { headers: { Accept: 'application/json' } });
  if (!response.ok) throw new Error(`GET /api/presets: HTTP ${response.status}`);
  return response.json();
}

/** POST the program to /api/trace/stream and call onEvent(kind, data) for every
 * Server-Sent Event as it arrives: pass, graph, dependencies, step..., done. `scheduler`
 * ('ready_queue', the default, or 'topological') orders each pass's steps; `window`
 * ({ seed, passesFrom }) asks for the passes from passesFrom on step by step, drawing
 * from the trace's seed so that it is the same run.
 *
 * A stream that breaks after its first event and before `done` (a server restarted, the
 * network changed) is asked for again with `Last-Event-ID`, up to RESUMES times: the
 * server runs the program again from the same seed and goes on after the last event this
 * page received, so onEvent sees every event once, in order. */
const RESUMES = 5;
const RESUME_DELAY_MS = 500;

export async function streamTrace(source, onEvent, signal, scheduler = null, window = null) {
  const request = { source };
  if (scheduler) request.scheduler = scheduler;
  if (window?.passesFrom) request.passes_from = window.passesFrom;
  if (window?.passesFrom && window.seed !== null && window.seed !== undefined) request.seed = window.seed;
  const body = JSON.stringify(request);
  let lastId = null;
  let done = false;
  const onBlock = (event) => {
    if (event.id !== null) lastId = event.id;
    if (event.kind === 'done') done = true;
    onEvent(event.kind, event.data);
  };
  for (let attempt = 0; ; attempt += 1) {
    let broken = null;
    try {
      await readStream(body, lastId, onBlock, signal);
      if (done) return;
      broken = new Error('POST /api/trace/stream: the stream ended before its last event');
    } catch (err) {
      if (signal?.aborted || !(err instanceof TypeError || err.resumable)) throw err;
      broken = err;
    }
    if (lastId === null || attempt >= RESUMES) throw broken;
    await new Promise((resolve) => { setTimeout(resolve, RESUME_DELAY_MS * (attempt + 1)); });
    if (signal?.aborted) throw new DOMException('aborted', 'AbortError');
  }
}

async function readStream(body, lastId, onBlock, signal) {
  const headers = { 'Content-Type': 'application/json', Accept: 'text/event-stream' };
  if (lastId !== null) headers['Last-Event-ID'] = lastId;
  const response = await fetch('/api/trace/stream', { method: 'POST', headers, body, signal });
  if (!response.ok) {
    const err = new Error(`POST /api/trace/stream: HTTP ${response.status}`);
    err.resumable = lastId !== null && response.status >= 500;   // a server coming back
    throw err;
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, '\n');
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event = parseEvent(block);
      if (event) onBlock(event);
    }
  }
}

function parseEvent(block) {
  let kind = 'message';
  let id = null;
  const data = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') kind = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  }
  return data.length ? { kind, id, data: JSON.parse(data.join('\n')) } : null;
}

/** The node classes the local-derivative view explains: {unary, elementwise, matrix}. */
export async function getDerivativeNodes() {
  const response = await fetch('/api/derivative/nodes', { headers: { Accept: 'application/json' } });
  if (!response.ok) throw new Error(`GET /api/derivative/nodes: HTTP ${response.status}`);
  return response.json();
}

/** One node's local derivative at one element ({source, seed, pass, node, element}),
 * computed by the server's engine; null when it explains no such node (404). */
export async function getDerivative(request) {
  const response = await fetch('/api/derivative', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify(request),
  });
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(`POST /api/derivative: HTTP ${response.status}`);
  return response.json();
}

/** The whole trace document of one program (POST /api/trace). */
export async function getTrace(source) {
  const response = await fetch('/api/trace', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ source }),
  });
  if (!response.ok) throw new Error(`POST /api/trace: HTTP ${response.status}`);
  return response.json();
}
