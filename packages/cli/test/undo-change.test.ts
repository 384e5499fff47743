import { describe, expect, it } from 'vitest';
import { ctxfs, pasted, useProject } from './support/cli.ts';

// `ctxfs undo <path> --change 99` of a file with three versions said 'has no change #99 to undo (the first version is
// not a change)': the bracket explains only --change 1, and nothing said which numbers there are.
describe('ctxfs undo --change of a number that is no change', () => {
  const project = useProject();

  it('names the versions there are, or says the first version is no change; the hint runs', () => {
    expect(ctxfs(project, ['replace', 'notes.txt', 'draft', 'review']).status).toBe(0);
    expect(ctxfs(project, ['replace', 'notes.txt', 'review', 'final']).status).toBe(0);
    const beyond = ctxfs(project, ['undo', 'notes.txt', '--change', '99']);
    expect(beyond.status).toBe(3);
    expect(beyond.stderr).toContain('notes.txt has no version #99: its versions are #1 to #3.');
    expect(beyond.stderr).not.toContain('first version');
    const first = ctxfs(project, ['undo', 'notes.txt', '--change', '1']);
    expect(first.status).toBe(3);
    expect(first.stderr).toContain('#1 is the first version of notes.txt, as ctxfs first saw it: no change to undo.');
    const hint = /See (ctxfs \S+ \S+)\.\s/.exec(beyond.stderr)?.[1] ?? '';
    expect(hint).toBe('ctxfs history notes.txt');
    const listed = pasted(project, hint);
    expect(listed.status, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^notes\.txt: 3 versions/);
  });
});
