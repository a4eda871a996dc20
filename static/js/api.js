// The only module that talks to the server.

export async function getPresets() {
  const response = await fetch('/api/presets', { headers: { Accept: 'application/json' } });
  if (!response.ok) throw new Error(`GET /api/presets: HTTP ${response.status}`);
  return response.json();
}

/** POST the program to /api/trace/stream and call onEvent(kind, data) for every
 * Server-Sent Event as it arrives: pass, graph, dependencies, step..., done. `scheduler`
 * ('ready_queue', the default, or 'topological') orders each pass's steps. */
export async function streamTrace(source, onEvent, signal, scheduler = null) {
  const response = await fetch('/api/trace/stream', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(scheduler ? { source, scheduler } : { source }),
    signal,
  });
  if (!response.ok) throw new Error(`POST /api/trace/stream: HTTP ${response.status}`);
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
      if (event) onEvent(event.kind, event.data);
    }
  }
}

function parseEvent(block) {
  let kind = 'message';
  const data = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') kind = value;
    else if (field === 'data') data.push(value);
  }
  return data.length ? { kind, data: JSON.parse(data.join('\n')) } : null;
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
