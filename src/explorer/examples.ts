/**
 * The README's example operations, opened as the explorer's first tabs on the embedded emulator (tests check they
 * match the README). One operation per tab: GraphiQL names a tab after the operation it last ran.
 */
export interface ExampleTab {
  query: string;
  variables?: string;
}

export function exampleTabs(transactionId?: string): ExampleTab[] {
  const variables = JSON.stringify({ id: transactionId ?? '<the id Pay returned>' }, null, 2);
  return [
    {
      query: `# Every operation but introspection needs
# the Authorization header (Headers, below).
# Run it with ▶.
query Payouts {
  payouts(first: 5) {
    totalCount
    nodes {
      id
      amountMoney { amount currencyIso }
      status
      customer { fullName email }
    }
  }
}
`,
    },
    {
      query: `# A first payment, step 1: Pay creates a
# transaction. The Send, Check and Updates
# tabs hold the id of one made when the
# gateway started ("Order 42"); to use the
# one Pay creates, put its id in their
# Variables.
mutation Pay {
  createTransaction(input: {
    amountDecimal: "2500"
    description: "Order 42"
    currency: { iso: "XOF" }
    customer: {
      firstname: "Ama"
      lastname: "Mensah"
      email: "ama@example.com"
    }
  }) {
    transaction { id status }
    userErrors { field message code }
  }
}
`,
    },
    {
      query: `# Step 2: Send pushes the transaction to
# the payer's phone. The sandbox number
# 64000001 approves after a moment. To
# watch it live, first run Updates in a
# second browser window on this page (a
# subscription stops when its tab is left),
# then run Send here.
mutation Send($id: ID!) {
  sendTransaction(
    id: $id
    mode: "mtn"
    phoneNumber: {
      number: "64000001"
      country: "BJ"
    }
  ) {
    paymentIntents { status mode }
    transaction { id status }
    userErrors { field message code }
  }
}
`,
      variables,
    },
    {
      query: `# Step 3: Check reads the transaction: once
# approved, isPaid is true and its
# statusHistory ends in APPROVED.
query Check($id: ID!) {
  transaction(id: $id) {
    status isPaid approvedAt
    customer { fullName }
    amountDebitedMoney { amount currencyIso }
    feesMoney { amount }
    statusHistory { status at event { type } }
  }
}
`,
      variables,
    },
    {
      query: `# The transaction's status, live.
# 1. Run Updates here: it shows the
#    current status first.
# 2. Stay on this tab (GraphiQL stops a
#    subscription when you switch tabs) and
#    settle the payment elsewhere: in the
#    emulator console (its address is in
#    the output of npm start), Approve on
#    the row of this id; or, in a second
#    browser window on this page, run Send.
# 3. APPROVED arrives here. The subscription
#    stays open (a refund could follow):
#    stop it with ■.
subscription Updates($id: ID!) {
  transactionUpdated(id: $id) {
    status approvedAt customer { email }
  }
}
`,
      variables,
    },
  ];
}

export const EXAMPLE_OPERATIONS: ExampleTab[] = exampleTabs();
