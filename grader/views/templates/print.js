addEventListener("beforeprint", () => { for (const d of document.querySelectorAll("details")) d.open = true; });
