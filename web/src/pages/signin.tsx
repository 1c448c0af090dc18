import { useState } from 'preact/hooks';
import { signIn } from '../api.js';
import { ErrorNote, Field, Page } from '../ui.js';

/** Paste an identity-provider token, or arrive through the sign-in link (`#token=`). */
export function SignIn({
  onSignedIn,
  initialError,
  notice,
}: {
  onSignedIn: () => void;
  initialError: string | null;
  /** Why the user is here again (an ended session): information, not a failure. */
  notice?: string | null;
}) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(initialError);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const failure = await signIn(token.trim());
    setBusy(false);
    if (failure) setError(failure);
    else onSignedIn();
  };
  return (
    <div class="signin">
      <Page title="Sign in to Mnemo">
        <p>
          Follow the sign-in link the server prints at start, or paste an access token from your
          identity provider.
        </p>
        <form onSubmit={submit} class="card">
          <Field label="Access token (JWT)">
            <textarea
              name="access_token"
              rows={4}
              required
              value={token}
              onInput={(e) => setToken((e.target as HTMLTextAreaElement).value)}
            />
          </Field>
          <button type="submit" disabled={busy || token.trim() === ''}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        {notice && !error ? (
          <p class="note warning" role="alert">
            {notice}
          </p>
        ) : null}
        <ErrorNote message={error} />
      </Page>
    </div>
  );
}
