import pkg from './testing.js';

export const { cassettePath, withCassette, readCassette, DEFAULT_DIR } = pkg;
export default pkg;
