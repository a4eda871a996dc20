// Moves the step index while playing: one pop per beat, faster at higher speed. It only
// dispatches actions; stepping back is moving an index, never undoing effects.

import { shownStep, timeline } from './store.js';

export const BEAT_MS = 1600;

export function beat(speed) {
  return BEAT_MS / speed;
}

export function createPlayer(getState, dispatch) {
  let timer = null;

  function tick() {
    timer = null;
    const state = getState();
    if (!state.playing) return;
    const t = timeline(state.run);
    const step = shownStep(state);
    if (step >= t.count - 1) {
      if (state.run.status !== 'running') { dispatch({ type: 'playing', playing: false }); return; }
    } else {
      dispatch({ type: 'step', step: step + 1 });
    }
    schedule();
  }

  function schedule() {
    if (timer === null) timer = setTimeout(tick, beat(getState().settings.speed));
  }

  return {
    /** Call after every state change: starts or stops the beat. */
    sync() {
      const state = getState();
      if (state.playing) schedule();
      else if (timer !== null) { clearTimeout(timer); timer = null; }
    },
    restart() {
      if (timer !== null) { clearTimeout(timer); timer = null; }
      if (getState().playing) schedule();
    },
  };
}
