declare module 'autocannon' {
  interface Options {
    url: string;
    method?: string;
    duration?: number;
    connections?: number;
    body?: string;
    headers?: Record<string, string>;
  }
  interface Result {
    requests: { average: number };
    latency: { p99: number; p50: number };
    errors: number;
    non2xx: number;
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
