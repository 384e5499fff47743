/**
 * Issue 19, defects 3 and 4, on snippets of real packages: a definition's
 * range starts at its first decorator, annotation or attribute however many
 * there are, and its doc comment is only what stands on its own lines
 * directly above it — never a comment ending the line of code before.
 */
import { describe, expect, test } from 'vitest';
import { type CodeSymbol, flattenSymbols, treeSitterSymbols } from '../src/index.ts';

function brief(symbols: readonly CodeSymbol[]): string[] {
  return flattenSymbols(symbols).map((s) => `${s.kind} ${s.qualifiedName} ${s.docStartLine}/${s.startLine}-${s.endLine}`);
}

describe('every decorator belongs to the definition', () => {
  const CASES: Array<{ language: string; what: string; source: string; expected: string[] }> = [
    {
      language: 'python',
      // attr/_version_info.py (attrs 22.2.0)
      what: 'Python, two decorators on a class, one on a method',
      source: `from ._make import attrib, attrs


@total_ordering
@attrs(eq=False, order=False, slots=True, frozen=True)
class VersionInfo:
    """
    A version object that can be compared to tuple of length 1--4:
    """

    year = attrib(type=int)

    @classmethod
    def _from_version_string(cls, s):
        """
        Parse *s* and return a _VersionInfo.
        """
        v = s.split(".")
        return cls(year=int(v[0]))
`,
      expected: ['class VersionInfo 4/4-19', 'method VersionInfo._from_version_string 13/13-19'],
    },
    {
      language: 'python',
      // _pytest/fixtures.py (pytest 7.2.1): three decorators, a comment above them.
      what: 'Python, three decorators under a comment',
      source: `# Fixture finalization.
@final
@dataclasses.dataclass(frozen=True)
@attr.s(auto_attribs=True)
class FixtureFunctionMarker:
    scope: "Union[_ScopeName, Callable[[str, Config], _ScopeName]]"
`,
      expected: ['class FixtureFunctionMarker 1/2-6'],
    },
    {
      language: 'typescript',
      what: 'TypeScript, two class decorators before export and two on a method',
      source: `/** The toolbar. */
@Component({ selector: 'app-toolbar' })
@Injectable()
export class Toolbar {
  @HostListener('click')
  @Throttle(100)
  onClick(): void {}
}
`,
      expected: ['class Toolbar 1/2-8', 'method Toolbar.onClick 5/5-7'],
    },
    {
      language: 'java',
      // java/util/concurrent/CopyOnWriteArrayList.java (JDK): two annotations under a Javadoc.
      what: 'Java, two annotations',
      source: `public class CopyOnWriteArrayList<E> {
    /**
     * Returns a shallow copy of this list.
     */
    @Override
    @SuppressWarnings("unchecked")
    public Object clone() {
        return null;
    }
}
`,
      expected: ['class CopyOnWriteArrayList 1/1-10', 'method CopyOnWriteArrayList.clone 2/5-9'],
    },
    {
      language: 'rust',
      what: 'Rust, two attributes under a doc comment',
      source: `/// A point.
#[derive(Debug, Clone)]
#[serde(rename_all = "camelCase")]
pub struct Point {
    x: i32,
}
`,
      expected: ['struct Point 1/2-6'],
    },
    {
      language: 'c-sharp',
      what: 'C#, two attribute lists',
      source: `public class Api {
    /// <summary>Gets one.</summary>
    [HttpGet]
    [Route("items/{id}")]
    public Item Get(int id) { return null; }
}
`,
      expected: ['class Api 1/1-6', 'method Api.Get 2/3-5'],
    },
  ];
  test.each(CASES)('$what', async ({ language, source, expected }) => {
    expect(brief(await treeSitterSymbols(language, source))).toEqual(expected);
  });
});

describe('only comments on their own lines are doc comments', () => {
  test('a trailing eslint-disable-line comment above a type is not its doc comment', async () => {
    const source = `type A = { a: string };
const handlers = new Map<string, any>(); // eslint-disable-line @typescript-eslint/no-explicit-any
type B = { b: number };
// B's twin.
type C = B;
`;
    expect(brief(await treeSitterSymbols('typescript', source))).toEqual(['type A 1/1-1', 'variable handlers 2/2-2', 'type B 3/3-3', 'type C 4/5-5']);
  });

  test('a comment followed by code on its line, and the tail of a block comment ending a line of code, are not doc comments', async () => {
    const source = `let x = 1; /* counts
 * the calls
 */
function f() {}
/* inline */ g();
function h() {}
`;
    expect(brief(await treeSitterSymbols('javascript', source))).toEqual(['variable x 1/1-1', 'function f 4/4-4', 'function h 6/6-6']);
  });

  test('Python: a comment ending the line above is not the doc comment; a comment block is', async () => {
    const source = `TIMEOUT = 5  # seconds
def wait():
    pass

# Retries
# forever.
def retry():
    pass
    # done
`;
    expect(brief(await treeSitterSymbols('python', source))).toEqual(['function wait 2/2-3', 'function retry 5/7-8']);
  });
});

describe('a file the grammar cannot parse whole', () => {
  // src/api/observable.ts (mobx 6.13.5): tree-sitter's TypeScript grammar fails on generic call signatures on consecutive lines.
  const OBSERVABLE = `export interface IObservableValueFactory {
    <T>(value: T, options?: CreateObservableOptions): IObservableValue<T>
    <T>(value?: T, options?: CreateObservableOptions): IObservableValue<T | undefined>
}

const observableFactories: IObservableFactory = {
    box<T = any>(value: T, options?: CreateObservableOptions): IObservableValue<T> {
        const o = asCreateObservableOptions(options)
        return new ObservableValue(value, getEnhancerFromOptions(o), o.name, true, o.equals)
    },
}

/** Is it observable? */
export function isObservable(value: any): boolean {
    return value != null
}
`;

  test('the definitions after the error keep their ranges; what the error holds is left out, not guessed', async () => {
    expect(brief(await treeSitterSymbols('typescript', OBSERVABLE))).toEqual([
      'variable observableFactories 6/6-11',
      'method observableFactories.box 7/7-10',
      'function isObservable 13/14-16',
    ]);
  });
});
