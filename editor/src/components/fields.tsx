// Small form controls of the property and training panels.
import { useEffect, useState, type ReactNode } from 'react';

/** A text box that commits on Enter or when it loses focus, and shows the model's value otherwise. */
export function CommitInput(props: {
  value: string;
  onCommit: (text: string) => string | null; // returns an error to show, or null
  placeholder?: string;
  testId?: string;
  title?: string;
}) {
  const { value, onCommit, placeholder, testId, title } = props;
  const [text, setText] = useState(value);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setText(value);
    setError(null);
  }, [value]);
  const commit = () => {
    if (text === value) return;
    setError(onCommit(text));
  };
  return (
    <span className="nf-commit">
      <input
        value={text}
        placeholder={placeholder}
        title={title}
        data-testid={testId}
        className={error ? 'invalid' : ''}
        onChange={(e) => setText(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => {
          if (e.key === 'Enter') commit();
          if (e.key === 'Escape') setText(value);
        }}
      />
      {error && <span className="nf-field-error">{error}</span>}
    </span>
  );
}

export function Row(props: { label: ReactNode; title?: string; error?: string; children: ReactNode; testId?: string }) {
  return (
    <div className={`nf-row${props.error ? ' has-error' : ''}`} data-testid={props.testId}>
      <label title={props.title}>{props.label}</label>
      <div className="nf-control">
        {props.children}
        {props.error && <div className="nf-field-error" data-testid="field-error">{props.error}</div>}
      </div>
    </div>
  );
}
