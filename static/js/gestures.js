// Zoom and pan of the graph from the pointer: the wheel (and a trackpad's pinch, which
// Chromium sends as a wheel with ctrlKey), a drag, a two-finger pinch, the zoom buttons and
// the overview. Each gesture only dispatches camera actions; store.js folds them.

const WHEEL_RATE = 0.0018;          // zoom factor per wheel pixel: e^(-rate × deltaY)
const STEP = 1.25;                  // one press of + or −

export function zoomStep(direction) {
  return direction > 0 ? STEP : 1 / STEP;
}

export function wireGestures(wrap, dispatch) {
  const local = (event) => {
    const r = wrap.getBoundingClientRect();
    return [event.clientX - r.left, event.clientY - r.top];
  };
  wrap.addEventListener('wheel', (event) => {
    if (!wrap.classList.contains('has-graph')) return;
    event.preventDefault();
    const lines = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? wrap.clientHeight : 1;
    const factor = Math.exp(-event.deltaY * lines * WHEEL_RATE * (event.ctrlKey ? 4 : 1));
    dispatch({ type: 'camera', op: 'zoom', factor, at: local(event) });
  }, { passive: false });

  const pointers = new Map();
  let pinch = null;
  const spread = () => {
    const [a, b] = [...pointers.values()];
    return { d: Math.hypot(a[0] - b[0], a[1] - b[1]), mid: [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2] };
  };
  wrap.addEventListener('pointerdown', (event) => {
    if (!wrap.classList.contains('has-graph') || event.button !== 0) return;
    if (event.target.closest('button, canvas')) return;
    pointers.set(event.pointerId, local(event));
    try { wrap.setPointerCapture(event.pointerId); } catch { /* a synthetic pointer */ }
    if (pointers.size === 2) pinch = spread();
    wrap.classList.add('dragging');
  });
  wrap.addEventListener('pointermove', (event) => {
    const last = pointers.get(event.pointerId);
    if (!last) return;
    const now = local(event);
    if (pointers.size === 1) {
      pointers.set(event.pointerId, now);
      dispatch({ type: 'camera', op: 'pan', dx: now[0] - last[0], dy: now[1] - last[1] });
      return;
    }
    pointers.set(event.pointerId, now);
    const next = spread();
    if (pinch && pinch.d > 0) {
      dispatch({ type: 'camera', op: 'pan', dx: next.mid[0] - pinch.mid[0], dy: next.mid[1] - pinch.mid[1] });
      dispatch({ type: 'camera', op: 'zoom', factor: next.d / pinch.d, at: next.mid });
    }
    pinch = next;
  });
  const end = (event) => {
    pointers.delete(event.pointerId);
    pinch = pointers.size === 2 ? spread() : null;
    if (!pointers.size) wrap.classList.remove('dragging');
  };
  wrap.addEventListener('pointerup', end);
  wrap.addEventListener('pointercancel', end);

  wrap.querySelector('#zoom-in').addEventListener('click', () => dispatch({ type: 'camera', op: 'zoom', factor: STEP }));
  wrap.querySelector('#zoom-out').addEventListener('click', () => dispatch({ type: 'camera', op: 'zoom', factor: 1 / STEP }));
  wrap.querySelector('#zoom-fit').addEventListener('click', () => dispatch({ type: 'camera', op: 'fit' }));

  const minimap = wrap.querySelector('#minimap');
  let steering = false;
  const steer = (event) => {
    const scale = Number(minimap.dataset.scale);
    if (!scale) return;
    const r = minimap.getBoundingClientRect();
    dispatch({ type: 'camera', op: 'centre', x: (event.clientX - r.left) / scale, y: (event.clientY - r.top) / scale });
  };
  minimap.addEventListener('pointerdown', (event) => {
    steering = true;
    try { minimap.setPointerCapture(event.pointerId); } catch { /* a synthetic pointer */ }
    steer(event);
  });
  minimap.addEventListener('pointermove', (event) => { if (steering) steer(event); });
  minimap.addEventListener('pointerup', () => { steering = false; });

  new ResizeObserver(() => {
    dispatch({ type: 'box', box: { w: wrap.clientWidth, h: wrap.clientHeight } });
  }).observe(wrap);
}
