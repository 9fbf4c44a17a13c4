/**
 * A third-party seller of a small REST resource, built on the official @x402/express middleware (version 2, settled
 * by the official facilitator on the local chain), that describes itself only by an OpenAPI document in YAML at
 * `/openapi.yaml`: a paid `PUT /notes/{id}` ($0.001, JSON body) and a paid `DELETE /notes/{id}` ($0.002), each
 * with a required `X-Tenant` header parameter. It records what every paid request carried.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import express from 'express';
import type { Address } from 'viem';
import { inProcessFacilitator } from './official-seller.js';
import { LOCAL_NETWORK, type PaidEnvironment } from './paid.js';

/** What one paid request carried, as the route saw it. */
export interface RestCall {
  method: string;
  id: string;
  tenant: string | undefined;
  body: unknown;
}

/** A running REST seller. */
export interface RestSeller {
  url: string;
  /** The paid requests the routes answered (each after a settled payment), in order. */
  calls: () => RestCall[];
  close(): Promise<void>;
}

/** The seller's OpenAPI document, in YAML. */
const REST_OPENAPI_YAML = `openapi: 3.1.0
info: { title: Notes, version: "1.0.0" }
components:
  parameters:
    Tenant: { name: X-Tenant, in: header, required: true, description: Whose notes, schema: { type: string } }
    Id: { name: id, in: path, required: true, schema: { type: string } }
paths:
  /notes/{id}:
    parameters: [ { $ref: "#/components/parameters/Id" } ]
    put:
      operationId: putNote
      summary: Writes a note
      parameters: [ { $ref: "#/components/parameters/Tenant" } ]
      requestBody:
        content:
          application/json:
            schema: { type: object, properties: { text: { type: string } }, required: [ text ] }
      x-payment-info: { protocols: [ x402 ], pricingMode: fixed, price: "0.001" }
    delete:
      operationId: deleteNote
      summary: Deletes a note
      parameters: [ { $ref: "#/components/parameters/Tenant" } ]
      x-payment-info: { protocols: [ x402 ], pricingMode: fixed, price: "0.002" }
`;

/** Starts the seller on 127.0.0.1 on a free port, paying `payTo`. */
export async function startRestSeller(paid: PaidEnvironment, payTo: Address): Promise<RestSeller> {
  const network = LOCAL_NETWORK as `${string}:${string}`;
  const resourceServer = new x402ResourceServer(inProcessFacilitator(paid)).register(network, new ExactEvmScheme());
  const calls: RestCall[] = [];
  const app = express();
  app.get('/openapi.yaml', (_req, res) => void res.type('application/yaml').send(REST_OPENAPI_YAML));
  const accepts = (price: string) => ({ scheme: 'exact', price, network, payTo });
  app.use(
    paymentMiddleware(
      {
        'PUT /notes/:id': { accepts: accepts('$0.001'), description: 'Writes a note', mimeType: 'application/json' },
        'DELETE /notes/:id': {
          accepts: accepts('$0.002'),
          description: 'Deletes a note',
          mimeType: 'application/json',
        },
      },
      resourceServer,
    ),
  );
  app.use(express.json());
  const record = (req: express.Request, res: express.Response) => {
    calls.push({ method: req.method, id: String(req.params.id), tenant: req.get('x-tenant'), body: req.body });
    res.json({ ok: true, method: req.method, id: req.params.id });
  };
  app.put('/notes/:id', record);
  app.delete('/notes/:id', record);
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => [...calls],
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
