// The lab page following a live session (`/join/CODE` → `/?room=CODE`): the room's events
// folded by ../follow.js, the lab brought to the presenter's frame through its own
// dispatch, a bar saying whether the page follows, and the poll card. Loaded only then.

import * as follow from '../follow.js';
import * as rooms from './rooms.js';

/** Actions that are the student's own moves: after one, the page no longer follows. */
const OWN_MOVES = new Set(['program', 'step', 'playing', 'run-start']);

export function startFollowing(code, lab) {
  let f = follow.initialFollow(code);
  let applying = false;
  let loading = null;
  const root = document.getElementById('follow');
  root.hidden = false;
  document.body.classList.add('following-room');
  addStyles();

  function apply(actions) {
    applying = true;
    try { actions.forEach(lab.dispatch); } finally { applying = false; }
  }

  async function load(source) {
    loading = source;
    lab.stop();
    apply([{ type: 'program', program: source }, { type: 'run-start', source, step: 0 }]);
    try {
      const doc = await rooms.trace(source);
      if (loading !== source) return;
      apply(follow.documentEvents(doc).map(([kind, data]) => ({ type: 'event', kind, data })));
    } catch (err) {
      if (loading === source) apply([{ type: 'run-failed', message: String(err.message || err) }]);
    } finally {
      if (loading === source) loading = null;
    }
    sync();
  }

  function sync() {
    if (!f.following || !f.presenter) return;
    const { load: source, actions } = follow.plan(lab.getState(), f.presenter, loading);
    if (source !== null) load(source);
    else apply(actions);
  }

  function onEvent(kind, data, id) {
    f = follow.foldRoom(f, kind, data, id);
    document.body.dataset.roomId = String(f.lastId ?? '');
    sync();
    render();
  }

  function onStatus(status) {
    if (f.status === 'ended') return;
    f = { ...f, status: status === 'gone' ? 'lost' : status === 'live' ? (f.presenter ? 'live' : 'connecting') : status };
    if (status === 'gone') {
      rooms.room(code).catch((err) => {
        if (err.status === 404) { f = follow.foldRoom(f, 'ended', { reason: 'ended' }); render(); }
      });
    }
    render();
  }

  async function choose(node) {
    const poll = f.poll;
    f = follow.answered(f, node);
    render();
    try {
      await rooms.answer(code, poll.id, node);
    } catch (err) {
      if (f.poll === poll) { f = { ...f, answered: null, pollError: String(err.message || err) }; render(); }
    }
  }

  function render() {
    renderBar(root, f, {
      back: () => { f = follow.backToPresenter(f); sync(); render(); },
    });
    renderPoll(root, f, choose);
    document.body.dataset.follow = f.status === 'ended' ? 'ended' : f.following ? 'following' : 'away';
  }

  rooms.follow(code, onEvent, onStatus);
  render();
  return {
    /** Every action the lab dispatches: the student's own moves step away. */
    observe(action) {
      if (applying || !f.following || !OWN_MOVES.has(action.type)) return;
      if (action.type === 'run-start' || follow.diverged(lab.getState(), f.presenter)) {
        f = follow.stepAway(f);
        render();
      }
    },
  };
}

function addStyles() {
  if (document.querySelector('link[data-follow]')) return;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL('../../css/follow.css', import.meta.url).href;
  link.dataset.follow = '1';
  document.head.appendChild(link);
}

function el(tag, className, text = null) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== null) node.textContent = text;
  return node;
}

const SAID = {
  connecting: 'Joining the live session…',
  reconnecting: 'Connection lost: reconnecting…',
  lost: 'Connection lost: reconnecting…',
};

function renderBar(root, f, { back }) {
  let bar = root.querySelector('.follow-bar');
  if (!bar) {
    bar = el('div', 'follow-bar');
    bar.setAttribute('role', 'status');
    root.prepend(bar);
  }
  const code = `${f.code.slice(0, 3)} ${f.code.slice(3)}`;
  const text = el('span', 'follow-text');
  const parts = [];
  if (f.status === 'ended') {
    parts.push(el('strong', null, f.ended === 'expired' ? 'The live session has expired.' : 'The presenter has ended the live session.'),
               document.createTextNode(' The page is yours now.'));
  } else if (SAID[f.status]) {
    parts.push(el('strong', null, SAID[f.status]));
  } else if (f.following) {
    parts.push(el('span', 'live-dot'), el('strong', null, 'Following the presenter'),
               document.createTextNode(` · session ${code}. Step or edit to explore on your own.`));
  } else {
    parts.push(el('strong', null, 'Exploring on your own'),
               document.createTextNode(` · session ${code} goes on.`));
  }
  text.replaceChildren(...parts);
  const children = [text];
  if (!f.following && f.status !== 'ended') {
    const button = el('button', 'follow-back', 'Back to presenter');
    button.type = 'button';
    button.id = 'follow-back';
    button.addEventListener('click', back);
    children.push(button);
  }
  bar.replaceChildren(...children);
  bar.dataset.status = f.status;
}

function renderPoll(root, f, choose) {
  let card = root.querySelector('.follow-poll');
  if (!f.poll) { if (card) card.remove(); return; }
  if (!card) {
    card = el('section', 'follow-poll');
    card.setAttribute('aria-live', 'polite');
    root.append(card);
  }
  const children = [el('h2', null, f.poll.question)];
  const list = el('div', 'poll-choices');
  for (const c of f.poll.candidates) {
    const button = el('button', 'poll-choice', c.label);
    button.type = 'button';
    button.dataset.node = String(c.node);
    const right = f.revealed && f.revealed.answer.node === c.node;
    button.classList.toggle('chosen', f.answered === c.node);
    button.classList.toggle('right', Boolean(right));
    button.disabled = Boolean(f.revealed);
    button.setAttribute('aria-pressed', String(f.answered === c.node));
    button.addEventListener('click', () => choose(c.node));
    list.append(button);
  }
  children.push(list);
  if (f.revealed) {
    const mine = f.answered === null ? 'You did not answer.'
      : f.answered === f.revealed.answer.node ? 'You got it ✓' : 'Not this time ✗';
    children.push(el('p', 'poll-answer', `The engine pops ${f.revealed.answer.label}. ${mine}`),
                  el('p', 'poll-reason', f.revealed.answer.reason));
  } else if (f.answered !== null) {
    children.push(el('p', 'poll-sent', 'Answer sent: you can change it until the presenter reveals.'));
  } else if (f.pollError) {
    children.push(el('p', 'poll-sent', f.pollError));
  }
  card.replaceChildren(...children);
}
