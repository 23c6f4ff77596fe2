/** The Dockerfile read as instructions, for tests that check it without a Docker engine. */

export interface Instruction {
  keyword: string;
  args: string;
}
export interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

/** Splits a Dockerfile into stages of instructions (comments dropped, continuations joined). */
export const parseDockerfile = (text: string): { globalArgs: Instruction[]; stages: Stage[] } => {
  const logical = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const globalArgs: Instruction[] = [];
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(line) as RegExpExecArray;
    const instruction = { keyword: keyword.toUpperCase(), args };
    if (instruction.keyword === 'FROM') {
      const match = /^(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      stages.push({ from: match?.[1] ?? args, name: match?.[2], instructions: [] });
    } else if (stages.length === 0) {
      globalArgs.push(instruction);
    } else {
      stages[stages.length - 1].instructions.push(instruction);
    }
  }
  return { globalArgs, stages };
};
