// The preset picker and the current program's one-line goal.

const OWN = 'Your own program. Without a backward() call, the lab calls it on the last assignment.';

export function render(select, goal, state) {
  if (select.options.length !== state.presets.length + 1) {
    const own = document.createElement('option');
    own.value = '';
    own.textContent = 'Your program';
    const options = state.presets.map((p) => {
      const o = document.createElement('option');
      o.value = p.id;
      o.textContent = p.title;
      return o;
    });
    select.replaceChildren(own, ...options);
  }
  const match = state.presets.find((p) => p.source === state.program);
  select.value = match ? match.id : '';
  const text = match ? match.goal : OWN;
  if (goal.textContent !== text) goal.textContent = text;
}
