/** The least a chosen password may be (sign-up and a user's own change); the dashboard's form checks it too. */
export const MIN_PASSWORD_LENGTH = 8;
