// The speaker view: a second window beside the presenter's, in step with it through a
// BroadcastChannel. It shows the program's goal and the instructor's notes, the step, the
// open question's answer (for the presenter's eyes only), and sends its keys back.

const $ = (id) => document.getElementById(id);
const channel = new BroadcastChannel('autograd-lab-present');

function set(id, text) {
  if ($(id).textContent !== text) $(id).textContent = text;
}

function render(m) {
  $('n-waiting').hidden = true;
  document.body.dataset.ready = '1';
  set('n-lesson', m.count ? `${m.lesson} · program ${m.index + 1} of ${m.count}` : m.lesson);
  set('n-title', m.title);
  set('n-goal', m.goal);
  set('n-step', m.counter);
  set('n-sentence', m.sentence);
  const paragraphs = (m.notes || 'No notes for this program.').split(/\n+/).map((line) => {
    const p = document.createElement('p');
    p.textContent = line;
    return p;
  });
  if ($('n-notes').dataset.text !== m.notes) {
    $('n-notes').dataset.text = m.notes;
    $('n-notes').replaceChildren(...paragraphs);
  }
  $('n-poll').hidden = !m.poll;
  if (m.poll) {
    set('n-poll-text', `${m.poll.question} Answer: ${m.poll.answer}. ${m.poll.reason} (${m.poll.answers} answered${m.poll.revealed ? ', revealed' : ''})`);
  }
  set('n-next', m.next ? `Next: ${m.next}` : 'Last program of the lesson.');
  set('n-room', m.room ? `Live session ${m.room.code.slice(0, 3)} ${m.room.code.slice(3)} · ${m.room.followers} following` : 'No live session.');
}

channel.addEventListener('message', (event) => {
  if (event.data?.type === 'notes') render(event.data);
});

document.addEventListener('keydown', (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  channel.postMessage({ type: 'key', key: event.key, shift: event.shiftKey });
  if ([' ', 'PageDown', 'PageUp', 'ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(event.key)) event.preventDefault();
});

channel.postMessage({ type: 'hello' });
