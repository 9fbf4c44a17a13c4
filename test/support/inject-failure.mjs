// Test-only preload for the built CLI (node --import): on SIGUSR2 the process fails the way TOLLBOOTH_TEST_INJECT says,
// `rejection` (a promise rejected with nobody listening) or `exception` (a throw outside any handler). The error text
// carries an RPC URL with a key in its path and query, which the process must never log.
process.on('SIGUSR2', () => {
  const secret = 'https://rpc.example.test/v2/SEKRET-KEY-123?apikey=SEKRET-KEY-123';
  if (process.env.TOLLBOOTH_TEST_INJECT === 'exception') {
    setImmediate(() => {
      throw new Error(`injected exception calling ${secret}`);
    });
    return;
  }
  void Promise.reject(new Error(`injected rejection calling ${secret}\nRequest body: {"secret":"SEKRET-KEY-123"}`));
});
