// The HTTP floor of `npm run bench -- server`: plain node:http, no framework, no search.
// Each request's body is read, then the same fixed reply (a real /retrieval response, saved
// by the benchmark) is sent, so a row of this server is what Node's HTTP alone costs on the
// machine with the same load generator.
//   node bench/lib/http-floor-server.mjs <port> <reply.json>
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [port, replyFile] = process.argv.slice(2);
const reply = readFileSync(replyFile);
const health = Buffer.from('{"status":"ok","index":"ready"}');
const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    const body = req.url === '/health' ? health : reply;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
server.listen(Number(port), '127.0.0.1');
process.on('SIGINT', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
