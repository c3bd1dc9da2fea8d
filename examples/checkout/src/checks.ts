/**
 * The form's fields checked in the page, before anything is created: each
 * problem is a sentence for the person typing, on the field it is about.
 */

export interface Order {
  amount: string;
  description: string;
  firstname: string;
  lastname: string;
  email: string;
  /** Digits only, the Benin subscriber number without +229. */
  phone: string;
  mode: string;
}

export type Checked = { ok: true; order: Order } | { ok: false; problems: Partial<Record<keyof Order, string>> };

const text = (fields: FormData, name: string) => String(fields.get(name) ?? '').trim();

/** Whole CFA francs: the currency has no cents. Spaces between thousands are fine ("2 500"). */
function amountProblem(raw: string): string | null {
  if (raw === '') return 'Enter the amount to pay, in CFA francs (for example 2500).';
  const compact = raw.replace(/[\s\u00a0\u202f]/g, '');
  if (/^\d+[.,]\d*$/.test(compact)) return `Enter the amount in whole CFA francs, digits only: the franc has no cents, so write ${compact.split(/[.,]/)[0] || '0'} rather than ${raw}.`;
  if (!/^\d+$/.test(compact)) return 'Enter the amount in digits only, in whole CFA francs (for example 2500).';
  if (Number(compact) <= 0) return 'The amount must be above zero.';
  return null;
}

/** A Benin mobile number: 8 digits (64000001), or 10 starting 01; +229 or 00229 in front, spaces and dashes are fine. */
function phoneDigits(raw: string): string | null {
  const compact = raw.replace(/[\s.\-()]/g, '');
  const local = compact.replace(/^(\+|00)229/, '');
  return /^\d{8}$/.test(local) || /^01\d{8}$/.test(local) ? local : null;
}

export function checkOrder(fields: FormData): Checked {
  const problems: Partial<Record<keyof Order, string>> = {};
  const amount = text(fields, 'amount');
  const amountIssue = amountProblem(amount);
  if (amountIssue) problems.amount = amountIssue;
  const description = text(fields, 'description');
  if (description === '') problems.description = 'Say what the payment is for (for example the order number).';
  const firstname = text(fields, 'firstname');
  if (firstname === '') problems.firstname = "Enter the payer's first name.";
  const lastname = text(fields, 'lastname');
  if (lastname === '') problems.lastname = "Enter the payer's last name.";
  const email = text(fields, 'email');
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) problems.email = "Enter the payer's e-mail address, like ama@example.com.";
  const rawPhone = text(fields, 'phone');
  const phone = phoneDigits(rawPhone);
  if (phone === null) {
    problems.phone = rawPhone === ''
      ? "Enter the payer's mobile-money number."
      : "This is not a Benin mobile number. Enter 8 digits (for example 64000001), or 10 starting with 01; +229 in front is fine.";
  }
  if (Object.keys(problems).length > 0) return { ok: false, problems };
  return { ok: true, order: { amount: amount.replace(/[\s\u00a0\u202f]/g, ''), description, firstname, lastname, email, phone: phone!, mode: text(fields, 'mode') } };
}
