/**
 * What a terminal would show after receiving some output: just enough of a VT100 to replay the
 * live view (newlines, carriage returns, cursor up, erase line, colour), and an error on any other control sequence, so
 * a renderer that starts clearing the screen or jumping the cursor home fails loudly.
 */
/* eslint-disable no-control-regex -- escape sequences are what this reads */
export function screenAfter(output: string): string[] {
  const rows: string[] = [''];
  let row = 0;
  let column = 0;
  for (let i = 0; i < output.length;) {
    const sequence = /^\x1b\[([\d;]*)([A-Za-z])/.exec(output.slice(i, i + 16));
    if (sequence) {
      const [whole, params, command] = sequence;
      if (command === 'A') row = Math.max(0, row - Number(params || 1));
      else if (command === 'K' && params === '2') rows[row] = '';
      else if (command !== 'm') throw new Error(`unexpected control sequence ${JSON.stringify(whole)}`);
      i += whole.length;
      continue;
    }
    const char = output[i];
    if (char === '\x1b') throw new Error(`unexpected escape at ${JSON.stringify(output.slice(i, i + 8))}`);
    if (char === '\r') column = 0;
    else if (char === '\n') {
      row++;
      column = 0;
      if (row === rows.length) rows.push('');
    } else {
      const line = rows[row].padEnd(column);
      rows[row] = line.slice(0, column) + char + line.slice(column + 1);
      column++;
    }
    i++;
  }
  return rows;
}

/** Any sequence that clears the screen or homes the cursor. */
export const CLEAR_SCREEN = /\x1b\[[23]?J|\x1bc|\x1b\[H|\x1b\[\d*;\d*H/;

/** A colour (SGR) sequence. */
export const COLOUR_CODE = /\x1b\[[\d;]*m/;
