// The rooms' side of the server, for the presenter and for followers: the only module
// of the live session that talks to it (the lab's own traces go through ../api.js).

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };

async function call(method, url, { token = null, body = undefined } = {}) {
  const headers = { ...JSON_HEADERS };
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const error = new Error(data?.detail && typeof data.detail === 'string' ? data.detail : `HTTP ${response.status}`);
    error.status = response.status;
    throw error;
  }
  return data;
}

/** The whole trace of a program, from the server's cache when the room traced it already. */
export function trace(source) {
  return call('POST', '/api/trace', { body: { source } });
}

export function lessons() {
  return call('GET', '/api/lessons');
}

export function createRoom(state) {
  return call('POST', '/api/rooms', { body: { state } });
}

export function room(code) {
  return call('GET', `/api/rooms/${encodeURIComponent(code)}`);
}

export function putState(code, token, state) {
  return call('PUT', `/api/rooms/${encodeURIComponent(code)}/state`, { token, body: state });
}

export function endRoom(code, token) {
  return call('DELETE', `/api/rooms/${encodeURIComponent(code)}`, { token });
}

export function openPoll(code, token) {
  return call('POST', `/api/rooms/${encodeURIComponent(code)}/polls`, { token, body: { kind: 'next-pop' } });
}

export function tally(code, token, poll) {
  return call('GET', `/api/rooms/${encodeURIComponent(code)}/polls/${encodeURIComponent(poll)}`, { token });
}

export function reveal(code, token, poll) {
  return call('POST', `/api/rooms/${encodeURIComponent(code)}/polls/${encodeURIComponent(poll)}/reveal`, { token });
}

export function answer(code, poll, node) {
  return call('POST', `/api/rooms/${encodeURIComponent(code)}/polls/${encodeURIComponent(poll)}/answers`,
              { body: { device: deviceId(), node } });
}

/** A random id this browser keeps, so that a poll counts one answer per device. */
export function deviceId() {
  const key = 'autograd-lab-device';
  let id = null;
  try { id = localStorage.getItem(key); } catch { /* storage refused: one id per page */ }
  if (!id) {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    id = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
    try { localStorage.setItem(key, id); } catch { /* see above */ }
  }
  return id;
}

const KINDS = ['state', 'poll', 'results', 'ended'];

/** Follow a room's events: onEvent(kind, data, id) for each, onStatus('live' | 'reconnecting'
 * | 'gone'). The browser reconnects by itself after a dropped connection and sends
 * Last-Event-ID, so the server resumes with exactly the events missed. */
export function follow(code, onEvent, onStatus) {
  const source = new EventSource(`/api/rooms/${encodeURIComponent(code)}/events`);
  for (const kind of KINDS) {
    source.addEventListener(kind, (event) => {
      onEvent(kind, JSON.parse(event.data), Number(event.lastEventId));
      if (kind === 'ended') source.close();
    });
  }
  source.addEventListener('open', () => onStatus('live'));
  source.addEventListener('error', () => {
    onStatus(source.readyState === EventSource.CLOSED ? 'gone' : 'reconnecting');
  });
  return { close: () => source.close() };
}
