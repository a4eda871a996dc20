// The presenter's live session: the room (created, resumed after a reload, ended), every
// frame sent to it as soon as it changes (the latest one; never two requests at once),
// how many follow, and the question asked of the room. The control token stays in this
// browser (sessionStorage), sent only in the Authorization header.

import * as rooms from './rooms.js';

const KEY = 'autograd-lab-room';
const WATCH_MS = 2000;
const TALLY_MS = 1000;

function el(tag, className, text = null) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== null) node.textContent = text;
  return node;
}

export function spaced(code) {
  return `${code.slice(0, 3)} ${code.slice(3)}`;
}

export function createSession({ viewState, changed }) {
  const s = { room: null, poll: null, join: false, notice: '' };
  let sentKey = null;
  let sending = null;
  let watcher = null;
  let tallier = null;
  let shownKey = '';

  function keep(room) {
    s.room = room;
    try { sessionStorage.setItem(KEY, JSON.stringify(room)); } catch { /* private mode */ }
    clearInterval(watcher);
    watcher = setInterval(watch, WATCH_MS);
    changed();
  }

  function lost(text) {
    clearInterval(watcher);
    s.room = null;
    s.join = false;
    s.notice = text;
    s.closePoll();
    try { sessionStorage.removeItem(KEY); } catch { /* see keep */ }
    changed();
  }

  async function watch() {
    if (!s.room) return;
    try {
      const info = await rooms.room(s.room.code);
      if (s.room && info.followers !== s.room.followers) { s.room = { ...s.room, followers: info.followers }; changed(); }
    } catch (err) {
      if (err.status === 404) lost('The live session has expired.');
    }
  }

  /** Send the current frame if the room has not got it yet; resolves once it has. */
  async function flush() {
    const state = viewState();
    if (!s.room || !state) return;
    const key = JSON.stringify(state);
    if (key === sentKey) return;
    if (sending) { await sending.catch(() => {}); return flush(); }
    const { code, token } = s.room;
    sending = rooms.putState(code, token, state);
    try {
      await sending;
      sentKey = key;
    } catch (err) {
      if (err.status === 404 || err.status === 403) lost('The live session has ended.');
      else setTimeout(() => s.send(), 1000);
    } finally {
      sending = null;
    }
    return flush();
  }

  async function pollTally() {
    const poll = s.poll;
    if (!poll || !s.room) return;
    try {
      const tally = await rooms.tally(s.room.code, s.room.token, poll.question.id);
      if (s.poll === poll) { s.poll = { ...poll, tally }; changed(); }
    } catch { /* the next beat tries again */ }
  }

  Object.assign(s, {
    send() { flush().catch(() => {}); },
    async start() {
      const created = await rooms.createRoom(viewState());
      sentKey = JSON.stringify(viewState());
      s.join = true;
      s.notice = '';
      keep({ code: created.code, token: created.token, joinUrl: created.join_url, qrUrl: created.qr_url, followers: 0 });
    },
    async resume() {
      let saved = null;
      try { saved = JSON.parse(sessionStorage.getItem(KEY) ?? 'null'); } catch { saved = null; }
      if (!saved?.code) return;
      try {
        const info = await rooms.room(saved.code);
        keep({ ...saved, followers: info.followers });
      } catch {
        try { sessionStorage.removeItem(KEY); } catch { /* see keep */ }
      }
    },
    async end() {
      if (!s.room) return;
      const { code, token } = s.room;
      await rooms.endRoom(code, token).catch(() => {});
      lost('');
    },
    async ask() {
      if (!s.room) throw new Error('Start a live session first: the room answers on their own devices.');
      await flush();
      const created = await rooms.openPoll(s.room.code, s.room.token);
      s.poll = { question: created.question, answer: created.answer, tally: null, revealed: null };
      clearInterval(tallier);
      tallier = setInterval(pollTally, TALLY_MS);
      changed();
    },
    async reveal() {
      const poll = s.poll;
      if (!poll || !s.room) return;
      const revealed = await rooms.reveal(s.room.code, s.room.token, poll.question.id);
      clearInterval(tallier);
      if (s.poll === poll) s.poll = { ...poll, revealed };
      await pollTally();
      changed();
    },
    closePoll() {
      clearInterval(tallier);
      if (s.poll) { s.poll = null; changed(); }
    },
    render(root, joinRoot) {
      const room = s.room;
      const key = room ? `${room.code}:${room.followers}` : `none:${s.notice}`;
      if (key !== shownKey) {
        shownKey = key;
        root.replaceChildren(...(room ? roomParts(room) : startParts()));
      }
      joinRoot.hidden = !(room && s.join);
      if (room && joinRoot.dataset.code !== room.code) {
        joinRoot.dataset.code = room.code;
        joinRoot.querySelector('#qr').src = room.qrUrl;
        joinRoot.querySelector('#join-code').textContent = spaced(room.code);
        joinRoot.querySelector('#join-url').textContent = room.joinUrl;
      }
    },
  });

  function startParts() {
    const button = el('button', 'p-live', 'Start live session');
    button.type = 'button';
    button.id = 'live';
    button.addEventListener('click', () => s.start().catch((err) => { s.notice = String(err.message || err); changed(); }));
    return s.notice ? [el('span', 'p-room-notice', s.notice), button] : [button];
  }

  function roomParts(room) {
    const code = el('button', 'p-code', spaced(room.code));
    code.type = 'button';
    code.id = 'room-code';
    code.title = 'Show or hide the join code and QR code (J)';
    code.addEventListener('click', () => { s.join = !s.join; changed(); });
    const followers = el('span', 'p-followers', `${room.followers} following`);
    followers.id = 'followers';
    const end = el('button', 'p-end', 'End session');
    end.type = 'button';
    end.id = 'end';
    end.addEventListener('click', () => s.end());
    return [code, followers, end];
  }

  return s;
}
