/**
 * The reply header that names the project a search server serves (its folder's name,
 * percent-encoded). The terminal client compares it with its `-f` folder. A module of its
 * own so the client does not load the server to read one name.
 */
export const PROJECT_HEADER = 'X-Noderag-Project';
