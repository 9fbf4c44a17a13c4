/** The two view functions both sides read to learn whether an EVM payment's nonce is burnt (reconciler, agent). */

/** EIP-3009 `authorizationState(authorizer, nonce)`: true once the authorization was used or cancelled. */
export const AUTHORIZATION_STATE_ABI = [
  {
    type: 'function',
    name: 'authorizationState',
    stateMutability: 'view',
    inputs: [
      { name: 'authorizer', type: 'address' },
      { name: 'nonce', type: 'bytes32' },
    ],
    outputs: [{ type: 'bool' }],
  },
] as const;

/** Permit2 `nonceBitmap(owner, wordPos)`: the 256 unordered nonces of one word, a set bit per burnt nonce. */
export const NONCE_BITMAP_ABI = [
  {
    type: 'function',
    name: 'nonceBitmap',
    stateMutability: 'view',
    inputs: [
      { name: 'owner', type: 'address' },
      { name: 'wordPos', type: 'uint256' },
    ],
    outputs: [{ type: 'uint256' }],
  },
] as const;
