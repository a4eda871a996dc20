// The player's controls reflect the state: position, playing, speed.

import { shownStep, timeline } from '../store.js';

export function render(root, state) {
  const t = timeline(state.run);
  const step = shownStep(state);
  const last = t.count - 1;
  const q = (id) => root.querySelector(`#${id}`);
  q('first').disabled = step === 0;
  q('back').disabled = step === 0;
  q('forward-step').disabled = step >= last;
  q('last').disabled = step >= last;
  const play = q('play');
  play.disabled = last === 0 && state.run.status !== 'running';
  const label = state.playing ? 'Pause' : step >= last && last > 0 ? 'Replay' : 'Play';
  play.setAttribute('aria-label', label);
  play.setAttribute('aria-pressed', String(state.playing));
  play.querySelector('use').setAttribute('href', state.playing ? '#i-pause' : '#i-play');
  const scrub = q('scrub');
  scrub.max = String(last);
  if (scrub.value !== String(step)) scrub.value = String(step);
  scrub.disabled = last === 0;
  scrub.setAttribute('aria-valuetext', `step ${step} of ${last}`);
  const speed = q('speed');
  if (speed.value !== String(state.settings.speed)) speed.value = String(state.settings.speed);
}
