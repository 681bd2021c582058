/**
 * Building DOM from data. Text from the model or the user only ever becomes a text node (or an
 * attribute value), never markup: there is no innerHTML anywhere in the console.
 */

/**
 * `h('li', { className: 'memory', dataset: { id } }, 'text', child)`: an element with properties,
 * data attributes and children; strings become text nodes, null and false are skipped.
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  const { dataset, ...rest } = props;
  Object.assign(element, rest);
  Object.assign(element.dataset, dataset);
  append(element, children);
  return element;
}

export function append(parent, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(typeof child === 'string' || typeof child === 'number' ? String(child) : child);
  }
  return parent;
}

/** Replaces an element's children. */
export function fill(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/** An element of the page by its id: index.html has each one the console names. */
export const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
