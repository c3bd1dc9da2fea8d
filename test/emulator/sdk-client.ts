/**
 * A minimal client written the way the public client libraries of this API
 * family talk to it: enveloped responses unwrapped by their `v1/<name>` key,
 * the older `POST /v1/{mode}` send path, and `PUT /v1/payouts/start` with
 * `{payouts: [...]}`. A test helper to prove the emulator serves such clients;
 * not the gateway's client.
 */
type Obj = Record<string, unknown>;

export class SdkError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly body: unknown,
  ) {
    super(`HTTP ${httpStatus}`);
  }
}

export class SdkClient {
  constructor(
    private readonly apiBase: string,
    private readonly apiKey: string,
  ) {}

  private async request(method: string, path: string, body?: unknown): Promise<Obj> {
    const res = await fetch(`${this.apiBase}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${this.apiKey}`,
        'content-type': 'application/json',
        'x-version': '1.1.0',
        'x-source': 'sdk-client-test',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as Obj;
    if (!res.ok) throw new SdkError(res.status, json);
    return json;
  }

  private static unwrap(json: Obj, name: string): Obj {
    const value = json[`v1/${name}`];
    if (value === undefined || value === null || typeof value !== 'object') throw new Error(`no v1/${name} in response`);
    return value as Obj;
  }

  async createCustomer(params: { firstname: string; lastname: string; email: string; phone_number: { number: string; country: string } }): Promise<Obj> {
    return SdkClient.unwrap(await this.request('POST', '/customers', params), 'customer');
  }

  async createTransaction(params: { description: string; amount: number; currency: { iso: string }; customer: { id: number } }): Promise<Obj> {
    return SdkClient.unwrap(await this.request('POST', '/transactions', params), 'transaction');
  }

  async retrieveTransaction(id: number): Promise<Obj> {
    return SdkClient.unwrap(await this.request('GET', `/transactions/${id}`), 'transaction');
  }

  /** `Transaction::generateToken()`: flat `{token, url}`. */
  async generateToken(id: number): Promise<{ token: string; url: string }> {
    return (await this.request('POST', `/transactions/${id}/token`)) as { token: string; url: string };
  }

  /** `Transaction::sendNowWithToken($mode, $token)` through the older `/v1/{mode}` path. */
  async sendNowWithToken(mode: string, token: string): Promise<Obj[]> {
    const json = await this.request('POST', `/${mode}`, { token });
    return json['v1/payment_intents'] as Obj[];
  }

  async createPayout(params: { amount: number; currency: { iso: string }; customer: { id: number }; mode: string }): Promise<Obj> {
    return SdkClient.unwrap(await this.request('POST', '/payouts', params), 'payout');
  }

  async retrievePayout(id: number): Promise<Obj> {
    return SdkClient.unwrap(await this.request('GET', `/payouts/${id}`), 'payout');
  }

  /** `Payout::startAll([...])`: `{payouts: [...]}`. */
  async startAll(items: { id: number; scheduled_at?: string }[]): Promise<Obj[]> {
    const json = await this.request('PUT', '/payouts/start', { payouts: items });
    return json['v1/payouts'] as Obj[];
  }
}
