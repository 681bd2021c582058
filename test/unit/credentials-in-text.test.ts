/**
 * What the check in front of every memory write takes for a credential (platform/credentials-in-text.ts): each kind
 * of secret as people paste it, in the formats the vendors publish (documentation examples and test card numbers,
 * none of them live), and health text as memory holds it, which must pass whatever numbers, units, dates, phone
 * numbers and joined words it has.
 */
import { findCredential, type CredentialKind } from '../../platform/credentials-in-text';

const SECRETS: Array<[string, CredentialKind]> = [
  // API keys by their vendors' prefixes.
  [
    'My Anthropic key is sk-ant-api03-R2D2C3POx9kLmN8vQ7wE6rT5yU4iO3pA2sD1fG0hJ9kL8zX7cV6bN5mQ4wE3rT2yU1iO0pA9sD8fG7hJ6kL5zX4cV3bN2mQ1w-AA',
    'api_key',
  ],
  ['OPENAI_API_KEY=sk-proj-4fXk9Qm2Lp7Rt1Vw8Yz3Bc6Dn0Gh5Jk2Mn4Pq7St9Vx1Za3Cd6Ef8Gh', 'api_key'],
  ['old OpenAI key sk-4fXk9Qm2Lp7Rt1Vw8Yz3T3BlbkFJBc6Dn0Gh5Jk2Mn4Pq7St9', 'api_key'],
  ['aws_access_key_id = AKIAIOSFODNN7EXAMPLE', 'api_key'],
  ['Here is my GitHub token ghp_16C7e42F292c6912E7710c838347Ae178B4a so you can read my repo.', 'api_key'],
  ['github_pat_11ABCDEFG0123456789abc_Kq7Rt1Vw8Yz3Bc6Dn0Gh5Jk2Mn4Pq7St9Vx1Za3Cd6Ef8GhJk2Mn4Pq7St9Vx1Za3C', 'api_key'],
  ['slack bot: xoxb-2048157213-4096318426153-Kq7Rt1Vw8Yz3Bc6Dn0Gh5Jk2', 'api_key'],
  ['stripe sk_live_51Hc8Xk2Lp7Rt1Vw8Yz3Bc6Dn', 'api_key'],
  ['Stripe test key sk_test_4eC39HqLyjWDarjtT1zdp7dc', 'api_key'],
  ['Maps key AIzaSyD4fXk9Qm2Lp7Rt1Vw8Yz3Bc6Dn0Gh5Jk2', 'api_key'],
  ['Use amy_live_7Hc2Kq9Xw4Lm8Rt1Vb6Nz3Pd5Fg0Js2A for the sync.', 'api_key'],
  ['The Oura API key is 3f9aK27bQx81Lm0c', 'api_key'],
  // Access tokens.
  [
    'Token for the Withings sync: eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c',
    'access_token',
  ],
  ['curl -H "Authorization: Bearer Qm9yZWQ7TmV2ZXI6R2l2ZVVw" https://api.example.com', 'access_token'],
  ['My Oura personal access token is 5KQ7XJ2MZ4WTPBRN', 'access_token'],
  ['DATABASE_URL=postgres://amy:s3cretpass@db.example.com:5432/amy', 'access_token'],
  // Passwords and PINs.
  ['password: Tr0ub4dor&3', 'password'],
  ['My password is hunter22.', 'password'],
  ['login pwd=Summer2024!', 'password'],
  ['My password for the Garmin Connect app is correcthorsebatterystaple', 'password'],
  ['The PIN is 4821', 'password'],
  ['Authorization: Basic YWxpY2U6czNjcmV0cGFzcw==', 'password'],
  // Payment card numbers (the networks' published test numbers).
  ['Card 4111 1111 1111 1111, exp 12/27', 'card_number'],
  ['5555-5555-5555-4444', 'card_number'],
  ['Amex 378282246310005', 'card_number'],
  ['Discover 6011 1111 1111 1117', 'card_number'],
  ['Diners 3056 9309 0259 04', 'card_number'],
  ['JCB 3530111333300000 exp 04/28 cvv 123', 'card_number'],
  ['My Visa is 4012888888881881 expiring 09/29', 'card_number'],
  // Private keys and long random strings.
  ['-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----', 'private_key'],
  ['aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', 'random_string'],
  ['my token kR8vN2pQ7xLm4Tz9WbYc3Hs6', 'random_string'],
  ['webhook secret 5f4dcc3b5aa765d61d8327deb882cf99a1b2c3d4', 'random_string'],
];

test.each(SECRETS)('%s: %s', (text, kind) => {
  expect(findCredential(text)).toBe(kind);
});

test('a client’s meta is read as its JSON: a named secret in a key and its value is found', () => {
  expect(findCredential(JSON.stringify({ source: 'onboarding', password: 'hunter22' }))).toBe('password');
  expect(findCredential(JSON.stringify({ api_key: 'q8Xk2Lp7Rt1V' }))).toBe('api_key');
  expect(findCredential(JSON.stringify({ source: 'onboarding', screen: 'goals' }))).toBeNull();
});

const HEALTH_TEXT = [
  'I walked 10,000 steps a day in March.',
  'Steps last week: 8432, 10213, 9876, 12004, 7650, 11020, 9300.',
  'My LDL was 3.4 mmol/L on 2026-03-04; HbA1c 5.6%, fasting glucose 92 mg/dL.',
  'Resting heart rate 52 bpm, HRV 68 ms (RMSSD), SpO2 98%, blood pressure 128/82 mmHg, VO2max 52.',
  'Weighed 72.4 kg on 2026-05-20 and 71.9 kg on 2026-06-20.',
  'Sleep logged from 2026-05-20T22:41:00Z to 2026-05-21T06:55:12Z.',
  'Call Dr. Smith at +1 415 555 0132 or (415) 555-0199 before the appointment.',
  'UK clinic: +44 20 7946 0958, or 020 7946 0958 from London.',
  'Insurance member ID 123456789, group 0042-7781.',
  'Vegetarian. No fish.',
  'Goal: lift deep sleep by 15 minutes over the next 6 weeks.',
  'Marathon runner for 8 years; PR 3:12:45 in Berlin 2019.',
  'Takes Vitamin_D3_2000IU_daily_with_breakfast and 500 mg magnesium glycinate at night.',
  'Follows the Zone2-cardio-3x-per-week-45min plan and the 5x5-StrongLifts-program-week-12.',
  'Read https://pubmed.ncbi.nlm.nih.gov/12345678/ and doi.org/10.1016/j.jacc.2019.03.010 about sleep and HRV.',
  'Exports MyFitnessPal-WorkoutsExport2024 and wears a GarminForerunner965.',
  'Diagnosed with pneumonoultramicroscopicsilicovolcanoconiosis in 2015; COVID-19-booster-October-2025 done.',
  'Higher HRV on days with more steps (validated, effect -0.342, n=87).',
  'Bearer of bad news: my cholesterol went up again.',
  'The surgeon put a pin in my left ankle in 2019.',
  'My password manager reminds me to take my pills at 8am.',
  'My secret is that I skip breakfast on weekdays.',
  'A token of appreciation: running with my sister every Sunday.',
  'Basic training starts 2026-09-01; basic metabolic panel due in October.',
  'My blood pressure was 120/80 this morning; 135/85 and 142/90 later in the week.',
  'Born 1985-07-14; next appointment 14/07/2026 at 09:30.',
  'Call me on 07700 900123, or 0044 7700 900 123 from abroad.',
  // Card-shaped digits whose Luhn check fails (a typo'd card would be caught only if it passed).
  'Reference 4111 1111 1111 1112 on the lab invoice.',
  'Lifetime steps 5555555555554445, floors climbed 12000.',
  'NHS number 943 476 5919; Garmin unit ID 3987654321.',
  'Export id 3f2504e0-4f89-11d3-9a0c-0305e82c3301, tracker MAC 00:24:e4:7a:1b:2c.',
  'My API key is in my password manager, and so is my token.',
];

test.each(HEALTH_TEXT)('health text passes: %s', (text) => {
  expect(findCredential(text)).toBeNull();
});
