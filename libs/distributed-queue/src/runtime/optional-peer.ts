import { InvalidOptionsError } from '../errors';

/**
 * Loads an optional peer dependency when the option that needs it is on.
 * @throws InvalidOptionsError naming `option` when the package is not installed
 */
export function requireOptionalPeer<T>(pkg: string, option: string): T {
  try {
    // NOTE: required here, never imported at the top: applications without the option need not install it.
    return require(pkg) as T;
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (code === 'MODULE_NOT_FOUND' && message.includes(`'${pkg}'`)) {
      throw new InvalidOptionsError(option, `needs the ${pkg} package (npm i ${pkg})`);
    }
    throw error;
  }
}
