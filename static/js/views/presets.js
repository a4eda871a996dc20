// The preset picker and the current program's one-line goal.

const OWN = 'Your own program. Without a backward() call, the lab calls it on the last assignment.';

export function render(select, goal, state) {
  if (select.options.length !== state.presets.length + 1) {
    const own = document.createElement('option');
    own.value = '';
    own.textContent = 'Your program';
    // Grouped by topic (the server's), in the order the topics first appear.
    const groups = new Map();
    for (const p of state.presets) {
      const topic = p.topic ?? '';
      if (!groups.has(topic)) groups.set(topic, []);
      groups.get(topic).push(new Option(p.title, p.id));
    }
    const options = [...groups].map(([topic, items]) => {
      if (!topic || groups.size === 1) return items;
      const group = document.createElement('optgroup');
      group.label = topic;
      group.append(...items);
      return [group];
    });
    select.replaceChildren(own, ...options.flat());
  }
  const match = state.presets.find((p) => p.source === state.program);
  select.value = match ? match.id : '';
  const text = match ? match.goal : OWN;
  if (goal.textContent !== text) goal.textContent = text;
}
