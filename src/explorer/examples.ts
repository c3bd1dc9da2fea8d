/**
 * The README's example operations ("One query, then a first payment"), opened
 * as the explorer's first tabs when the gateway runs on its embedded emulator.
 * test/explorer/explorer.test.ts checks they still match the README.
 */
export const EXAMPLE_OPERATIONS: { query: string; variables?: string }[] = [
  {
    query: `# Every operation but introspection needs the Authorization header (Headers, below).
query Payouts {
  payouts(first: 5) {
    totalCount
    nodes { id amountMoney { amount currencyIso } status customer { fullName email } }
  }
}
`,
  },
  {
    query: `# A first payment: run Pay, put its transaction id in the variables, run Send, then Check.
# The phone number 64000001 approves after a moment.
mutation Pay {
  createTransaction(input: { amountDecimal: "2500", description: "Order 42", currency: { iso: "XOF" },
                             customer: { firstname: "Ama", lastname: "Mensah", email: "ama@example.com" } }) {
    transaction { id status }
    userErrors { field message code }
  }
}

mutation Send($id: ID!) {
  sendTransaction(id: $id, mode: "mtn", phoneNumber: { number: "64000001", country: "BJ" }) {
    paymentIntents { status mode }
    transaction { id status }
    userErrors { field message code }
  }
}

query Check($id: ID!) {
  transaction(id: $id) {
    status isPaid approvedAt customer { fullName }
    amountDebitedMoney { amount currencyIso } feesMoney { amount }
    statusHistory { status at event { type } }
  }
}
`,
    variables: '{ "id": "<the id Pay returned>" }',
  },
  {
    query: `# Over graphql-ws on the same /graphql path; start it, then run Send in another tab.
subscription Updates($id: ID!) {
  transactionUpdated(id: $id) { status approvedAt customer { email } }
}
`,
    variables: '{ "id": "<the id Pay returned>" }',
  },
];
