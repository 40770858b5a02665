"""One small repository per language added by issue 16 (C#, Kotlin, Ruby, PHP, Swift, Scala,
Bash, Lua): each has a helper in a second file reached through the language's import, a base
class whose method is called through the language's receiver (``this``, ``self``,
``$this->``, ``parent::``), a bare call into the same file and an external import. Used by
the unit tier (exact extraction) and the integration tier (graph + search)."""

from __future__ import annotations

FIXTURES: dict[str, dict[str, str]] = {
    "csharp": {
        "Acme/Util/Helper.cs": """namespace Acme.Util {
    // Formats invoice totals for printing.
    public static class Helper {
        public static string FormatTotal(int cents) { return cents.ToString(); }
    }
}
""",
        "Acme/App/Job.cs": """using System;
using Acme.Util;

namespace Acme.App {
    public interface IRunner { void Run(); }

    public class Base {
        public void Save() { }
    }

    public class Job : Base, IRunner {
        public int Count { get; set; }
        public void Run() {
            this.Save();
            Helper.FormatTotal(Count);
            Console.WriteLine("done");
            Audit();
            base.Save();
        }
        private void Audit() { }
    }
}
""",
    },
    "kotlin": {
        "src/com/acme/util/Helper.kt": """package com.acme.util

// Formats invoice totals for printing.
object Helper {
    fun formatTotal(cents: Int): String = cents.toString()
}
""",
        "src/com/acme/app/Job.kt": """package com.acme.app

import com.acme.util.Helper
import kotlinx.coroutines.launch

open class Base {
    fun save() {}
}

interface Runner {
    fun run()
}

class Job : Base(), Runner {
    companion object Factory {
        fun create(): Job = Job()
    }

    override fun run() {
        this.save()
        Helper.formatTotal(3)
        println("done")
        audit()
    }

    private fun audit() {}
}

fun String.shout(): String = uppercase()
""",
    },
    "ruby": {
        "lib/helper.rb": """# Formats invoice totals for printing.
module Helper
  def self.format_total(cents)
    cents.to_s
  end
end
""",
        "app/job.rb": """require "json"
require_relative "../lib/helper"

module Billing
  class Base
    def save
    end
  end

  class Job < Base
    def run
      self.save
      Helper.format_total(3)
      audit()
      @log.info("done")
    end

    def audit
    end

    def self.build
      new
    end
  end
end
""",
    },
    "php": {
        "src/Util/Helper.php": """<?php
namespace App\\Util;

// Formats invoice totals for printing.
class Helper {
    public static function formatTotal($cents) { return (string) $cents; }
}
""",
        "src/App/Job.php": """<?php
namespace App\\App;

use App\\Util\\Helper;
use Psr\\Log\\LoggerInterface;

require_once __DIR__ . "/functions.php";

interface Runner { public function run(); }

trait Audits {
    public function audit() { }
}

class Base {
    public function save() { }
}

class Job extends Base implements Runner {
    use Audits;
    public function run() {
        $this->save();
        Helper::formatTotal(3);
        parent::save();
        slugify("x");
        self::make();
        static::make();
    }
    public static function make() { }
}
""",
        "src/App/functions.php": """<?php
function slugify($text) { return strtolower($text); }
""",
    },
    "swift": {
        "Sources/Util/Helper.swift": """// Formats invoice totals for printing.
struct Helper {
    static func formatTotal(_ cents: Int) -> String { return String(cents) }
}
""",
        "Sources/App/Job.swift": """import Foundation
import Util

protocol Runner {
    func run()
}

class Base {
    func save() {}
}

class Job: Base, Runner {
    func run() {
        self.save()
        Helper.formatTotal(3)
        print("done")
        audit()
    }

    func audit() {}
}

extension Job {
    func describe() -> String { return "job" }
}
""",
    },
    "scala": {
        "src/com/acme/util/Helper.scala": """package com.acme.util

// Formats invoice totals for printing.
object Helper {
  def formatTotal(cents: Int): String = cents.toString
}
""",
        "src/com/acme/app/Job.scala": """package com.acme.app

import com.acme.util.Helper
import scala.collection.mutable.{Map => MMap}

trait Runner {
  def run(): Unit
}

class Base {
  def save(): Unit = {}
}

class Job extends Base with Runner {
  def run(): Unit = {
    this.save()
    Helper.formatTotal(3)
    println("done")
    audit()
  }

  def audit(): Unit = {}
}
""",
    },
    "bash": {
        "lib/common.sh": """# Formats invoice totals for printing.
format_total() {
  printf '%d\\n' "$1"
}
""",
        "bin/deploy": """#!/usr/bin/env bash
source "$(dirname "$0")/../lib/common.sh"

setup() {
  mkdir -p /tmp/out
}

deploy() {
  setup
  format_total 3
  echo "done"
}

deploy "$@"
""",
    },
    "lua": {
        "lib/helper.lua": """-- Formats invoice totals for printing.
local Helper = {}

function Helper.format_total(cents)
  return tostring(cents)
end

return Helper
""",
        "app/job.lua": """local helper = require("lib.helper")
local json = require("cjson")

local Job = {}

function Job:save()
end

function Job:run()
  self:save()
  helper.format_total(3)
  print("done")
  audit()
end

local function audit()
end

return Job
""",
    },
}
